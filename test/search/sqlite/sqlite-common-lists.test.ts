import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openWriter, openReader } from '../../../src/db/sqlite/connection.js';
import { SnapshotStore } from '../../../src/db/snapshot/snapshot-store.js';
import { createLogger } from '../../../src/logger.js';
import { commonListsFresh, readCommonList, type ListLimits } from '../../../src/search/sqlite/common-lists.js';
import { FTS_TOKENIZE } from '../../../src/search/sqlite/fts-table.js';
import { matchFor } from '../../../src/search/sqlite/match-expression.js';
import { SnapshotViews } from '../../../src/search/sqlite/pool/snapshot-views.js';
import { RankedSearch } from '../../../src/search/sqlite/sqlite-fts.js';
import { IdSet } from '../../../src/search/sqlite/term-sets.js';
import { beginIndexChanges, finishIndexChanges } from '../../../src/search/sqlite/sqlite-index.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { testClock } from '../../support/api.js';
import { corpusSections, generateCorpus, rawArticle } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { ftsMatch, killWorkers, parsedLogs, query, REPO_ROOT, runWorker, startWorker, workerEnv, type TestWorker } from '../../support/worker.js';

/*
 * Champion lists kept in the snapshot (src/search/sqlite/common-lists.ts): the worker stores,
 * in the transaction that changes the index, the id lists of the index's most common words,
 * and the search threads read them instead of the words' doclists. Each list must be exactly
 * what the index matches after any sync, and must not be trusted after a write the worker did
 * not follow.
 */

const dir = tempDir('common-lists-');
const LIMITS: ListLimits = { minDocs: 30, maxBytes: 1 << 20 };
const EN = generateCorpus({ locale: 'en', count: 240, seed: 7 });
const ZH = generateCorpus({ locale: 'zh', count: 80, seed: 8 });
let cms: TestCms;
const workers: TestWorker[] = [];

beforeAll(async () => {
  cms = await startTestCms();
  for (const locale of ['en', 'zh'] as const) for (const s of corpusSections(locale)) cms.store.upsertSection(locale, s);
  cms.store.upsertArticles([...EN, ...ZH]);
});

afterEach(async () => {
  for (const w of workers.splice(0)) w.close();
  await killWorkers();
});

afterAll(async () => {
  await cms?.close();
  dir.cleanup();
});

/** The worker in-process against the test CMS, keeping lists with `limits`. */
async function synced(name: string, limits: ListLimits = LIMITS): Promise<{ path: string; worker: TestWorker; clock: ReturnType<typeof testClock> }> {
  const path = dir.path(`${name}.db`);
  const clock = testClock('2026-11-20T08:00:00Z');
  const worker = startWorker({ databasePath: path, cmsUrl: cms.url, clock, overlapSeconds: 60 });
  workers.push(worker);
  worker.deps.searchLists = limits;
  expect((await worker.run('full')).status).toBe('succeeded');
  return { path, worker, clock };
}

interface Row {
  word: string;
  field: 'all' | 'title';
  docs: number;
}

function rows(path: string): Row[] {
  return query<Row>(path, 'SELECT word, field, docs FROM search_common_lists ORDER BY docs DESC, word, field');
}

/** A stored list's ids, decoded as the search threads decode them. */
function storedIds(path: string, word: string, field: 'all' | 'title'): number[] | undefined {
  const db = openWriter(path, { busyTimeoutMs: 5_000 });
  try {
    const list = readCommonList(db, word, field);
    return list && Array.from(IdSet.stored(list).toArray());
  } finally {
    db.$client.close();
  }
}

function fresh(path: string): boolean {
  const db = openWriter(path, { busyTimeoutMs: 5_000 });
  try {
    return commonListsFresh(db);
  } finally {
    db.$client.close();
  }
}

/** What the index itself matches for a word: the truth every list must equal. */
function indexIds(path: string, word: string, field: 'all' | 'title'): number[] {
  return ftsMatch(path, field === 'all' ? matchFor([word])! : `{title} : (${matchFor([word])!})`);
}

function expectListsMatchIndex(path: string): void {
  const listed = rows(path);
  expect(listed.length).toBeGreaterThan(0);
  for (const { word, field, docs } of listed) {
    const truth = indexIds(path, word, field);
    expect({ word, field, ids: storedIds(path, word, field) }).toEqual({ word, field, ids: truth });
    expect(docs).toBe(truth.length);
  }
  expect(fresh(path)).toBe(true);
}

/** Articles per index term, as the index counts them (fts5vocab). */
function termDocs(path: string): Map<string, number> {
  const sqlite = new Database(path, { readonly: true });
  try {
    sqlite.exec(`CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 'articles_fts', 'row')`);
    return new Map(sqlite.prepare<[], [string, number]>('SELECT term, doc FROM temp.v').raw().all());
  } finally {
    sqlite.close();
  }
}

const now = Date.parse('2026-11-20T08:00:00Z');

function search(path: string, q: string, locale: 'en' | 'zh' = 'en') {
  const store = new SnapshotStore(path, 5_000, createLogger({ level: 'silent' }), openReader);
  try {
    const session = store.session();
    const table = new SnapshotViews().table(session, locale);
    const ranked = new RankedSearch({ cacheBytes: 1 << 20, rankAllMax: 16, commonMin: 30, termBytes: 1 << 20 });
    return ranked.page(session.db, { q, section: undefined, contentTag: table.contentTag(now), page: 1, limit: 50 }, table.exposure(now, undefined));
  } finally {
    store.close();
  }
}

describe('champion lists kept in the snapshot by the worker', () => {
  it('a full sync lists the words in at least SEARCH_LISTS_MIN_DOCS articles, most frequent first, each exactly what the index matches', async () => {
    const { path } = await synced('full');
    const words = [...new Set(rows(path).map((r) => r.word))];
    // Words as the index holds them: "laser" is in about half the articles, "femtosecond" in one in twenty, "lidar" in one in a thousand.
    expect(words).toContain('laser');
    // Chinese words too, as the index holds them (segmented), and the first two characters of
    // its common longer words: the marker 激光器件 is indexed as 激光器 + 件, a query of 激光 is
    // a prefix of it.
    expect(words.some((w) => /\p{Script=Han}/u.test(w))).toBe(true);
    expect(termDocs(path).has('激光')).toBe(false);
    expect(words).toContain('激光');
    expect(words).not.toContain('femtosecond');
    expect(words).not.toContain('lidar');
    for (const { docs, field } of rows(path)) if (field === 'all') expect(docs).toBeGreaterThanOrEqual(LIMITS.minDocs);
    // Every term of the index in that many articles that a query can produce is listed.
    const frequent = [...termDocs(path)].filter(([term, docs]) => docs >= LIMITS.minDocs && /^[a-z]+$/.test(term)).map(([term]) => term);
    expect(frequent.length).toBeGreaterThan(10);
    expect(words).toEqual(expect.arrayContaining(frequent));
    expectListsMatchIndex(path);
  });

  it('an incremental sync follows new, edited and removed articles and a renamed section, as a recomputation would', async () => {
    const { path, worker, clock } = await synced('incremental');
    clock.advance(120_000);
    const at = '2026-11-20T08:01:30Z';
    const edited = EN.find((a) => a.title.toLowerCase().includes('laser'))!;
    const removed = EN.find((a) => a !== edited && a.body_markdown.toLowerCase().includes('laser'))!;
    cms.store.upsertArticle({ ...edited, title: 'Gyrotron only', excerpt: 'Nothing else.', body_markdown: 'Gyrotron.', updated_at: at });
    cms.store.upsertArticle({ ...removed, status: 'archived', updated_at: at });
    for (let i = 0; i < 5; i++) cms.store.upsertArticle(rawArticle({ slug: `late-${i}`, title: `Laser beam late ${i}`, section_slug: 'ultrafast', updated_at: at }));
    cms.store.upsertSection('en', { ...corpusSections('en').find((s) => s.slug === 'ultrafast')!, name: 'Laser pulses', updated_at: at });
    try {
      expect((await worker.run('incremental')).status).toBe('succeeded');
      const refresh = parsedLogs(worker.logs).find((l) => typeof l.msg === 'string' && l.msg.includes('followed the changes'));
      expect(refresh).toMatchObject({ mode: 'changes' });
      expect(storedIds(path, 'gyrotron', 'all')).toBeUndefined();
      expectListsMatchIndex(path);
    } finally {
      cms.store.upsertArticle(edited);
      cms.store.upsertArticle(removed);
      for (let i = 0; i < 5; i++) cms.store.removeArticle(`late-${i}`);
      cms.store.upsertSection('en', corpusSections('en').find((s) => s.slug === 'ultrafast')!);
    }
  });

  it('a write the worker did not make marks the lists stale: searches read the index, and the next sync recomputes them', async () => {
    const { path, worker, clock } = await synced('stale');
    const before = search(path, 'laser');
    // What a fix made with SQL or another tool does: the article and its index entry change, the lists do not.
    const sqlite = new Database(path);
    try {
      const en = new Set(query<{ id: number }>(path, `SELECT id FROM articles WHERE locale = 'en'`).map((r) => r.id));
      const victim = indexIds(path, 'laser', 'all').find((id) => en.has(id))!;
      sqlite.prepare(`UPDATE articles SET title = 'Gyrotron only', excerpt = 'Nothing.', body = 'Nothing.' WHERE id = ?`).run(victim);
      sqlite.prepare('DELETE FROM articles_fts WHERE rowid = ?').run(victim);
      sqlite.prepare(`INSERT INTO articles_fts (rowid, title, excerpt, body, section_name, author) VALUES (?, 'gyrotron only', 'nothing', 'nothing', '', '')`).run(victim);
    } finally {
      sqlite.close();
    }
    expect(fresh(path)).toBe(false);
    const after = search(path, 'laser');
    expect(after.total).toBe(before.total - 1);

    clock.advance(120_000);
    expect((await worker.run('incremental')).status).toBe('succeeded');
    expect(parsedLogs(worker.logs).some((l) => typeof l.msg === 'string' && l.msg.includes('common words recomputed') && l.mode === 'whole')).toBe(true);
    expectListsMatchIndex(path);
  });

  it('searches take a listed word from its stored list, and answer as from the index', async () => {
    const { path } = await synced('used');
    const { path: plain } = await synced('plain', { ...LIMITS, maxBytes: 0 });
    expect(rows(plain)).toEqual([]);
    for (const [q, locale] of [['laser', 'en'], ['laser beam', 'en'], ['las', 'en'], ['femtosecond laser', 'en'], ['激光', 'zh']] as const) {
      expect(search(path, q, locale)).toEqual(search(plain, q, locale));
    }
    // A doctored list (the worker never writes one) shows the search read it and not the index.
    const sqlite = new Database(path);
    try {
      sqlite.prepare(`UPDATE search_common_lists SET docs = 0, encoding = 'ids', ids = x'' WHERE word = 'laser'`).run();
    } finally {
      sqlite.close();
    }
    expect(search(path, 'laser').total).toBe(0);
  });

  it('keeps within SEARCH_LISTS_MB, dropping the least frequent words', async () => {
    const { path: all } = await synced('budget-all');
    const { path: few } = await synced('budget-few', { ...LIMITS, maxBytes: 2_000 });
    const allWords = new Set(rows(all).map((r) => r.word));
    const fewWords = new Set(rows(few).map((r) => r.word));
    expect(fewWords.size).toBeGreaterThan(0);
    expect(fewWords.size).toBeLessThan(allWords.size);
    // Ordered by the articles each term is in (the index's own count): every word kept is at
    // least as frequent as every word dropped.
    // A two-character Chinese prefix ranks with the most frequent term it starts.
    const docs = termDocs(all);
    const rank = (w: string) => docs.get(w) ?? Math.max(...[...docs].filter(([t]) => t.startsWith(w)).map(([, n]) => n));
    const dropped = [...allWords].filter((w) => !fewWords.has(w));
    expect(Math.min(...[...fewWords].map(rank))).toBeGreaterThanOrEqual(Math.max(...dropped.map(rank)));
    const bytes = query<{ n: number }>(few, 'SELECT sum(length(ids)) AS n FROM search_common_lists')[0]!.n;
    expect(bytes).toBeLessThanOrEqual(2_000);
  });

  it('keeps working on a connection whose earlier sync rolled back (its temporary tables went with it)', async () => {
    const { path } = await synced('rollback');
    const db = openWriter(path, { busyTimeoutMs: 5_000 });
    try {
      const refresh = (whole: boolean) => {
        db.$client.exec('BEGIN IMMEDIATE');
        try {
          const changes = beginIndexChanges(db, LIMITS);
          if (whole) changes.wholeIndex();
          else changes.record(indexIds(path, 'laser', 'all')[0]!, { title: 'laser', excerpt: '', body: '', sectionName: '', author: '' });
          return finishIndexChanges(db, changes).mode;
        } finally {
          db.$client.exec('ROLLBACK');
        }
      };
      for (let round = 0; round < 2; round++) {
        expect(refresh(true)).toBe('whole');
        expect(refresh(false)).toBe('changes');
      }
    } finally {
      db.$client.close();
    }
    expectListsMatchIndex(path);
  });

  it('tokenizes the changed articles exactly as articles_fts is tokenized', () => {
    const migration = readFileSync(`${REPO_ROOT}src/db/snapshot/migrations/0001_fts.sql`, 'utf8');
    expect(migration).toContain(`tokenize = '${FTS_TOKENIZE}'`);
  });

  it('the worker process keeps them, as SEARCH_LISTS_MIN_DOCS and SEARCH_LISTS_MB say', async () => {
    const path = dir.path('process.db');
    const env = workerEnv({ DATABASE_PATH: path, CMS_BASE_URL: cms.url, SEARCH_LISTS_MIN_DOCS: '30', SEARCH_LISTS_MB: '1', LOG_LEVEL: 'info' });
    const run = await runWorker(['--once', '--full'], env, 60_000);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/search lists of \d+ common words recomputed/);
    expectListsMatchIndex(path);
    const none = dir.path('process-none.db');
    expect((await runWorker(['--once', '--full'], { ...env, DATABASE_PATH: none, SEARCH_LISTS_MB: '0' }, 60_000)).code).toBe(0);
    expect(rows(none)).toEqual([]);
  });
});
