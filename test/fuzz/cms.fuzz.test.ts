import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArticlesBody } from '../../src/demo/cms-server.js';
import { checkPublicUrl } from '../../src/lib/safe-url.js';
import { FIELD_LIMITS, parseArticle } from '../../sync/cms/schemas.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { tempDir } from '../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../fakes/test-cms.js';
import { dumpSnapshot, query, startWorker, type TestWorker } from '../support/worker.js';
import { fuzzRuns, fuzzSeed } from './requests.js';

/*
 * The worker under a hostile CMS. Generated records (wrong types, missing fields, huge strings,
 * hostile URLs and Markdown, duplicate ids) are served by the test CMS beside valid ones; each
 * run is a real full sync into a real snapshot. Properties: the worker never throws, nothing
 * reaches the snapshot without passing validation, and the previous snapshot is never lost
 * (a failed run leaves it exactly as it was; a good run keeps every valid record).
 */

const SEED = fuzzSeed();
const SYNC_RUNS = Math.max(20, Math.round(fuzzRuns(10_000) / 160));
const PARSE_RUNS = Math.round(fuzzRuns(10_000) / 2);
// Generous bounds for a busy CI machine.
const TIMEOUT_MS = 300_000;

const HOSTILE_URLS = [
  'javascript:alert(1)', 'JaVaScRiPt:alert(1)', ' \u0001javascript:alert(1)', 'java\tscript:alert(1)', 'java\nscript:alert(1)',
  'javascript&#58;alert(1)', '&#x6A;avascript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox(1)',
  '//evil.example.com/x', '\\\\evil.example.com', 'https:\\\\evil.example.com', 'https://news.example.com@evil.example.com/',
  'https://user:pass@evil.example.com/', 'file:///etc/passwd', '', ' ', 'https://', 'http://[::1', 'https://a.b/' + 'x'.repeat(3_000),
  'https://img.example.com/"><img src=x onerror=alert(1)>', 'HTTPS://IMG.EXAMPLE.COM/A.JPG', 'https://例子.测试/图片.jpg',
];
const HOSTILE_MARKDOWN = [
  '[click](javascript:alert(1))', '<script>alert(1)</script>', '![x](data:image/svg+xml;base64,PHN2Zz4=)', '<img src=x onerror=alert(1)>',
  '```\n</code></pre><script>alert(1)</script>\n```', '\u202eevil\u202c', '\u0000\u0001\u0002', '${jndi:ldap://x}', "'; DROP TABLE articles; --",
];

const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_URLS, ...HOSTILE_MARKDOWN) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
  // Past the field limits (title 1,000, excerpt 10,000...), and rarely past the body's 2,000,000.
  { weight: 2, arbitrary: fc.integer({ min: 190, max: 12_000 }).map((n) => 'y'.repeat(n)) },
  { weight: 1, arbitrary: fc.constantFrom(2_000_001).map((n) => 'z'.repeat(n)) },
);
const wrongType = fc.oneof(
  fc.constant(undefined), fc.constant(null), fc.integer(), fc.double(), fc.boolean(), fc.constant([]), fc.constant({}),
  fc.array(fc.string(), { maxLength: 2 }),
);
const hostileUrl = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_URLS) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('https://', 'http://', 'HTTP://', ' https:', 'https:\\\\', ''), fc.string({ unit: 'binary', maxLength: 30 })).map(([a, b]) => a + b) },
);
const safeImageUrl = fc.constantFrom('https://img.example.com/a.jpg', 'HTTPS://IMG.EXAMPLE.COM/A.JPG', ' https://img.example.com/b.jpg ', 'https:\\\\img.example.com\\c.jpg');
const hostileImage = fc.oneof(
  { weight: 4, arbitrary: fc.record({ url: fc.oneof(safeImageUrl, hostileUrl), alt: fc.string(), credit: fc.string(), credit_url: hostileUrl, source_url: hostileUrl }) },
  { weight: 1, arbitrary: fc.record({ url: hostileUrl, alt: hostileString, credit: hostileString, credit_url: hostileUrl, source_url: hostileUrl }) },
  { weight: 1, arbitrary: fc.record({ url: wrongType, alt: wrongType }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: wrongType },
);

const FIELDS = ['id', 'locale', 'slug', 'status', 'title', 'excerpt', 'body_markdown', 'section_slug', 'author', 'image', 'published_at', 'updated_at', 'url'] as const;

/** One CMS record: a valid one with some fields replaced by something hostile. */
function hostileRecord(n: number, locale: 'en' | 'zh'): fc.Arbitrary<Record<string, unknown>> {
  const mutation = fc.constantFrom(...FIELDS).chain((field) => {
    const typed: fc.Arbitrary<unknown> =
      field === 'url' ? hostileUrl : field === 'image' ? hostileImage : hostileString;
    return fc.tuple(
      fc.constant(field),
      fc.oneof(
        { weight: 4, arbitrary: typed },
        { weight: 1, arbitrary: wrongType.map((v): unknown => v) },
        { weight: 1, arbitrary: fc.constantFrom<unknown>('published', 'draft', 'fz-dup', 'section-fz', '2030-01-01T00:00:00Z', '2026-10-01T08:00:00+08:00', 'zh', 'en') },
      ),
    );
  });
  return fc.array(mutation, { minLength: 1, maxLength: 4 }).map((mutations) => {
    const record: Record<string, unknown> = { ...rawArticle({ id: `fz-${locale}-${n}`, slug: `fz-${n}`, locale, section_slug: 'fiber' }) };
    for (const [field, value] of mutations) {
      if (value === undefined) delete record[field];
      else record[field] = value;
    }
    return record;
  });
}

const hostilePage = (locale: 'en' | 'zh') =>
  fc.array(fc.nat(1_000), { minLength: 1, maxLength: 8 }).chain((ns) => fc.tuple(...ns.map((n, i) => hostileRecord(i * 1_000 + n, locale))));

// --- what may be in the snapshot ------------------------------------------------------------

const SLUG = /^[A-Za-z0-9._~-]{1,200}$/;
const STORED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

function isStoredUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const verdict = checkPublicUrl(value);
  // Stored in the form a browser resolves it: normalising it again changes nothing.
  return verdict.ok && verdict.href === value;
}

type Row = Record<string, unknown>;

/** Every stored article satisfies what validation promises. Returns the offending rows. */
function invalidRows(path: string): Row[] {
  return query<Row>(path, 'SELECT * FROM articles').filter(
    (row) =>
      !(
        row.status === 'published' &&
        SLUG.test(String(row.slug)) &&
        (row.locale === 'en' || row.locale === 'zh') &&
        isStoredUrl(row.url) &&
        (row.image_url === null || isStoredUrl(row.image_url)) &&
        [row.image_credit_url, row.image_source_url].every((u) => u === null || u === '' || isStoredUrl(u)) &&
        typeof row.title === 'string' && row.title.length >= 1 && row.title.length <= FIELD_LIMITS.title &&
        typeof row.body === 'string' && row.body.length <= FIELD_LIMITS.body &&
        typeof row.excerpt === 'string' && row.excerpt.length <= FIELD_LIMITS.excerpt &&
        typeof row.author === 'string' && row.author.length <= FIELD_LIMITS.author &&
        (row.published_at === null || STORED_TIME.test(String(row.published_at))) &&
        STORED_TIME.test(String(row.updated_at))
      ),
  );
}

// --- the suite ------------------------------------------------------------------------------

const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let cms: TestCms;
let worker: TestWorker;
let baseline: Row[];

beforeAll(async () => {
  cms = await startTestCms();
  for (const locale of ['en', 'zh'] as const) cms.store.upsertSection(locale, rawSection({ slug: 'fiber' }));
  cms.store.upsertArticles([
    ...Array.from({ length: 6 }, (_, i) => rawArticle({ id: `good-en-${i}`, slug: `good-${i}`, section_slug: 'fiber', image: { url: 'https://img.example.com/a.jpg', alt: 'a', credit: 'c', credit_url: 'https://c.example.com/', source_url: 'https://s.example.com/' } })),
    ...Array.from({ length: 2 }, (_, i) => rawArticle({ id: `good-zh-${i}`, locale: 'zh', slug: `good-${i}`, section_slug: 'fiber' })),
  ]);
  worker = startWorker({ databasePath: dbPath, cmsUrl: cms.url, pageSize: 100, logLevel: 'silent', maxResponseBytes: 32 * 1024 * 1024 });
  const first = await worker.run('full');
  expect(first.status).toBe('succeeded');
  baseline = query<Row>(dbPath, "SELECT * FROM articles WHERE cms_id LIKE 'good-%' ORDER BY id");
  expect(baseline).toHaveLength(8);
  console.info(`CMS fuzz: seed ${SEED}, ${SYNC_RUNS} hostile full syncs, ${PARSE_RUNS} parsed records (FUZZ_SEED=${SEED} to replay)`);
});

afterAll(async () => {
  cms.rewritePages(undefined);
  worker.close();
  await cms.close();
  dir.cleanup();
});

describe('CMS fuzzing: record validation', () => {
  it('accepts a generated record only in a form that is safe to store', () => {
    fc.assert(
      fc.property(fc.constantFrom('en' as const, 'zh' as const).chain((locale) => fc.tuple(fc.constant(locale), hostileRecord(1, locale))), ([locale, raw]) => {
        const parsed = parseArticle(raw, locale);
        if (!parsed.ok) {
          expect(parsed.rejected.reason.length).toBeGreaterThan(0);
          expect(parsed.rejected.reason.length).toBeLessThanOrEqual(500);
          return;
        }
        const r = parsed.record;
        expect(isStoredUrl(r.url)).toBe(true);
        if (r.image) {
          expect(isStoredUrl(r.image.url)).toBe(true);
          for (const u of [r.image.creditUrl, r.image.sourceUrl]) expect(u === '' || isStoredUrl(u)).toBe(true);
        }
        expect(SLUG.test(r.slug)).toBe(true);
        expect(r.locale).toBe(locale);
      }),
      { seed: SEED, numRuns: PARSE_RUNS },
    );
  }, TIMEOUT_MS);
});

describe('CMS fuzzing: full syncs against a hostile CMS', () => {
  it('never throws, stores only valid records, and never loses the previous snapshot', async () => {
    const outcomes = { succeeded: 0, failed: 0, hostileStored: 0 };
    await fc.assert(
      fc.asyncProperty(hostilePage('en'), hostilePage('zh'), fc.nat(9).map((n) => n === 0), async (en, zh, breakEnvelope) => {
        const inject: Record<'en' | 'zh', unknown[]> = { en, zh };
        cms.rewritePages((body: ArticlesBody, page) => {
          // Only the full listing's first page carries them, so the run's check of changes
          // during the listing sees a quiet CMS.
          if (page.status !== 'published' || page.updatedSince !== undefined || page.page !== 1) return body;
          const extra = inject[page.locale];
          const data = [...body.data, ...extra];
          const meta = { ...body.meta, total: body.meta.total + extra.length };
          return breakEnvelope && page.locale === 'zh' ? { data: 'not a list', meta } : { data, meta };
        });
        const before = dumpSnapshot(dbPath);
        const summary = await worker.run('full');
        cms.rewritePages(undefined);

        expect(['succeeded', 'failed']).toContain(summary.status);
        outcomes[summary.status] += 1;
        expect(invalidRows(dbPath)).toEqual([]);
        if (summary.status === 'failed') {
          expect(summary.error).toMatch(/\S/);
          expect(dumpSnapshot(dbPath)).toEqual(before);
        } else {
          // Valid records the CMS kept serving are all still there, unchanged.
          expect(query<Row>(dbPath, "SELECT * FROM articles WHERE cms_id LIKE 'good-%' ORDER BY id")).toEqual(baseline);
          outcomes.hostileStored += query(dbPath, "SELECT id FROM articles WHERE cms_id LIKE 'fz-%'").length;
        }
      }),
      { seed: SEED + 1, numRuns: SYNC_RUNS, endOnFailure: true },
    );
    // The generator must reach both sides: runs that store some generated records, and runs that fail.
    expect(outcomes.succeeded).toBeGreaterThan(0);
    expect(outcomes.hostileStored).toBeGreaterThan(0);
  }, TIMEOUT_MS);
});
