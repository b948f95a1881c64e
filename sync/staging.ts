import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import type { Db } from '../src/db/sqlite/connection.js';
import type { ArticleRecord } from '../src/db/snapshot/records.js';
import { storedHash } from '../src/db/snapshot/snapshot-write.js';
import type { Locale } from '../src/locale.js';
import { indexText, type IndexText } from '../src/search/sqlite/sqlite-index.js';

/** What the apply step will do with a staged CMS record. */
export type StagedKind = 'upsert' | 'keep' | 'remove';

export const STAGING_TABLE = 'temp.staged_articles';
const UPSERT_BATCH = 500;

/** A stored article a full listing lacks, with the updated_at it was stored with. */
export interface RemovalCandidate {
  cmsId: string;
  updatedAt: string;
}

export interface StagedUpsert {
  cmsId: string;
  hash: string;
  record: ArticleRecord;
  fts: IndexText;
}

/**
 * Fetched records wait here, in a temporary table private to the worker's connection, until
 * the whole sync has been fetched. Writing it takes no lock on the snapshot (so the CLI and
 * other writers are never held up by a slow CMS), memory stays flat whatever the corpus size,
 * and a run that fails or is killed simply leaves it behind: readers never see it.
 */
export class Staging {
  private readonly insert: Database.Statement<[string, string, string, StagedKind, string | null, string | null, string | null]>;
  private readonly sqlite: Database.Database;

  constructor(private readonly db: Db) {
    this.sqlite = db.$client;
    // Temp tables in a file, not in memory: a first full sync stages the whole corpus.
    this.sqlite.pragma('temp_store = FILE');
    this.sqlite.exec(`CREATE TEMP TABLE IF NOT EXISTS staged_articles (
      locale TEXT NOT NULL, cms_id TEXT NOT NULL, updated_at TEXT NOT NULL, kind TEXT NOT NULL,
      hash TEXT, record TEXT, fts TEXT, PRIMARY KEY (locale, cms_id))`);
    // The order the apply step reads upserts in; without it each batch re-sorts the table.
    this.sqlite.exec(`CREATE INDEX IF NOT EXISTS temp.staged_order ON staged_articles (locale, kind, updated_at, cms_id)`);
    // A record seen twice (pages shift while the CMS changes) keeps its newest version.
    this.insert = this.sqlite.prepare(
      `INSERT INTO staged_articles (locale, cms_id, updated_at, kind, hash, record, fts) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (locale, cms_id) DO UPDATE SET updated_at = excluded.updated_at, kind = excluded.kind,
         hash = excluded.hash, record = excluded.record, fts = excluded.fts
       WHERE excluded.updated_at >= staged_articles.updated_at`,
    );
  }

  clear(): void {
    this.sqlite.exec('DELETE FROM staged_articles');
  }

  /** Forgets what was staged for one locale, before its listing is read again. */
  clearLocale(locale: Locale): void {
    this.sqlite.prepare('DELETE FROM staged_articles WHERE locale = ?').run(locale);
  }

  /**
   * Stages one page: published records to upsert (or to keep, when unchanged), others to
   * remove. `rejected` are records that failed validation but whose CMS id was readable: the
   * stored version of each stays, unless its status says it is not published any more.
   */
  stagePage(locale: Locale, records: ArticleRecord[], rejected: Array<{ cmsId: string; status: string | null }>): void {
    this.sqlite.transaction(() => {
      for (const record of records) {
        if (record.status !== 'published') {
          this.insert.run(locale, record.cmsId, record.updatedAt, 'remove', null, null, null);
          continue;
        }
        const hash = contentHash(record);
        if (storedHash(this.db, locale, record.cmsId) === hash) {
          this.insert.run(locale, record.cmsId, record.updatedAt, 'keep', null, null, null);
          continue;
        }
        const fts = indexText(record);
        this.insert.run(
          locale,
          record.cmsId,
          record.updatedAt,
          'upsert',
          hash,
          JSON.stringify(record),
          JSON.stringify({ title: fts.title, excerpt: fts.excerpt, body: fts.body, author: fts.author }),
        );
      }
      // An empty updated_at loses against any valid version of the same record. A takedown is
      // applied though the rest of the record is broken: none of its other fields is needed.
      for (const { cmsId, status } of rejected) {
        const kind = status !== null && status !== 'published' ? 'remove' : 'keep';
        this.insert.run(locale, cmsId, '', kind, null, null, null);
      }
    })();
  }

  /**
   * Staged upserts of a locale, oldest change first. Read in batches: better-sqlite3 cannot
   * write on a connection while one of its statements is being iterated.
   */
  *upserts(locale: Locale): Generator<StagedUpsert> {
    const batch = this.sqlite.prepare<[string, string, string], { cms_id: string; updated_at: string; hash: string; record: string; fts: string }>(
      `SELECT cms_id, updated_at, hash, record, fts FROM staged_articles
       WHERE locale = ? AND kind = 'upsert' AND (updated_at, cms_id) > (?, ?)
       ORDER BY updated_at, cms_id LIMIT ${UPSERT_BATCH}`,
    );
    let after = { updatedAt: '', cmsId: '' };
    for (;;) {
      const rows = batch.all(locale, after.updatedAt, after.cmsId);
      for (const row of rows) {
        yield { cmsId: row.cms_id, hash: row.hash, record: JSON.parse(row.record), fts: JSON.parse(row.fts) };
      }
      const last = rows.at(-1);
      if (!last || rows.length < UPSERT_BATCH) return;
      after = { updatedAt: last.updated_at, cmsId: last.cms_id };
    }
  }

  removals(locale: Locale): string[] {
    return this.sqlite
      .prepare<[string], { cms_id: string }>(`SELECT cms_id FROM staged_articles WHERE locale = ? AND kind = 'remove'`)
      .all(locale)
      .map((r) => r.cms_id);
  }

  /** What this sync staged for a CMS record: its kind and updated_at, if it was seen. */
  seen(locale: Locale, cmsId: string): { kind: StagedKind; updatedAt: string } | undefined {
    const row = this.sqlite
      .prepare<[string, string], { kind: StagedKind; updated_at: string }>(
        `SELECT kind, updated_at FROM staged_articles WHERE locale = ? AND cms_id = ?`,
      )
      .get(locale, cmsId);
    return row && { kind: row.kind, updatedAt: row.updated_at };
  }

  /**
   * Stored articles of a locale that this sync did not stage: what a full listing would remove.
   * Oldest change first (by the updated_at stored), as the CMS lists them.
   */
  missingFromListing(locale: Locale): RemovalCandidate[] {
    return this.sqlite
      .prepare<[string, string], { cms_id: string; updated_at: string }>(
        `SELECT cms_id, updated_at FROM articles WHERE locale = ?
           AND cms_id NOT IN (SELECT cms_id FROM ${STAGING_TABLE} WHERE locale = ?)
         ORDER BY updated_at, cms_id`,
      )
      .all(locale, locale)
      .map((r) => ({ cmsId: r.cms_id, updatedAt: r.updated_at }));
  }

  count(locale: Locale): number {
    return (
      this.sqlite.prepare<[string], { n: number }>(`SELECT count(*) AS n FROM staged_articles WHERE locale = ?`).get(locale)
        ?.n ?? 0
    );
  }
}

/** Hash of everything stored about an article: an unchanged record is not rewritten. */
export function contentHash(record: ArticleRecord): string {
  const image = record.image;
  return createHash('sha256')
    .update(
      JSON.stringify([
        record.slug, record.status, record.title, record.excerpt, record.body, record.sectionSlug,
        record.author, image?.url, image?.alt, image?.credit, image?.creditUrl, image?.sourceUrl,
        record.publishedAt, record.updatedAt, record.url,
      ]),
    )
    .digest('base64url');
}
