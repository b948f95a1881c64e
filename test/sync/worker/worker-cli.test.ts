import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { dumpSnapshot, killWorkers, query, runWorker, startWorker, syncRuns, workerEnv } from '../../support/worker.js';

/*
 * The worker's real entry point, `node dist/sync/main.js`, in a clean environment: exit codes,
 * what it prints and what it writes.
 */

const TOKEN = 'cms-secret-7f3a9c2e41d8b6';

let dir: ReturnType<typeof tempDir>;
let dbPath: string;
let cms: TestCms;

const en = Array.from({ length: 7 }, (_, i) => rawArticle({ slug: `story-${i}`, section_slug: 'news' }));
const zh = Array.from({ length: 3 }, (_, i) => rawArticle({ locale: 'zh', slug: `zh-story-${i}`, section_slug: 'news' }));
const draft = rawArticle({ slug: 'a-draft', status: 'draft', published_at: null });

async function startCms(token?: string): Promise<void> {
  cms = await startTestCms(token === undefined ? {} : { token });
  cms.store.upsertSection('en', rawSection({ slug: 'news' }));
  cms.store.upsertSection('zh', rawSection({ slug: 'news' }));
  cms.store.upsertArticles([...en, ...zh, draft]);
}

const env = (vars: Record<string, string | undefined> = {}) =>
  workerEnv({ DATABASE_PATH: dbPath, CMS_BASE_URL: cms.url, LOG_LEVEL: 'info', ...vars });
const stderrLines = (stderr: string) => stderr.split('\n').filter((l) => l !== '');
const storedCount = () => query<{ n: number }>(dbPath, 'SELECT count(*) AS n FROM articles')[0]!.n;

beforeEach(() => {
  dir = tempDir();
  dbPath = dir.path('data/snapshot.db');
});

afterEach(async () => {
  await killWorkers();
  await cms?.close();
  dir.cleanup();
});

describe('sync --once', () => {
  beforeEach(() => startCms());

  it('exits 0 with a full sync that fills the snapshot, then an incremental one; --full forces a full one', async () => {
    const first = await runWorker(['--once'], env());

    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(storedCount()).toBe(10);
    expect(query(dbPath, `SELECT count(*) AS n FROM articles WHERE cms_id = ?`, draft.id)).toEqual([{ n: 0 }]);
    expect(first.stdout).toContain('full sync succeeded');

    const firstRunRequests = cms.requests.length;
    const second = await runWorker(['--once'], env());
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(syncRuns(dbPath).map((r) => [r.kind, r.status])).toEqual([
      ['full', 'succeeded'],
      ['incremental', 'succeeded'],
    ]);
    // The incremental run asks each locale for changes of any status since the last sync.
    const incremental = cms.requests.slice(firstRunRequests).filter((r) => r.path.startsWith('/articles'));
    expect(incremental.map((r) => new URL(r.path, 'http://x').searchParams.get('locale'))).toEqual(['en', 'zh']);
    expect(incremental.every((r) => r.path.includes('updated_since=') && !r.path.includes('status='))).toBe(true);

    const forced = await runWorker(['--once', '--full'], env());
    expect(forced).toMatchObject({ code: 0, stderr: '' });
    expect(syncRuns(dbPath).map((r) => r.kind)).toEqual(['full', 'incremental', 'full']);
  });

  it('exits non-zero against a down CMS with one line on stderr naming the cause, the snapshot as before', async () => {
    const first = startWorker({ databasePath: dbPath, cmsUrl: cms.url });
    expect((await first.run('full')).status).toBe('succeeded');
    first.close();
    cms.store.upsertArticle(rawArticle({ slug: 'would-be-new', section_slug: 'news' }));
    const before = dumpSnapshot(dbPath);
    await cms.setDown(true);

    const result = await runWorker(['--once', '--full'], env({ CMS_MAX_ATTEMPTS: '2', CMS_RETRY_BUDGET_MS: '1000' }));

    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(stderrLines(result.stderr)).toEqual([
      expect.stringMatching(/^sync failed: CMS unreachable: GET \/sections\?locale=en: connection refused \(2 attempts\)$/),
    ]);
    expect(dumpSnapshot(dbPath)).toEqual(before);
    expect(syncRuns(dbPath).at(-1)).toMatchObject({ status: 'failed', error: expect.stringContaining('connection refused') });
  });

  it.each([
    ['CMS_BASE_URL is missing', ['--once'], { CMS_BASE_URL: undefined }, /^Invalid configuration: CMS_BASE_URL is required/],
    ['CMS_PAGE_SIZE is out of range', ['--once'], { CMS_PAGE_SIZE: '500' }, /^Invalid configuration: CMS_PAGE_SIZE must be a whole number from 1 to 100 \(got "500"\)$/],
    ['SYNC_CRON is not a cron expression', [], { SYNC_CRON: 'bad' }, /^Invalid configuration: SYNC_CRON must be a cron expression.*\(got "bad"\)$/],
    ['an option is unknown', ['--once', '--bogus'], {}, /unknown option '--bogus'/],
  ] as const)('exits 1 with one line naming the problem when %s', async (_name, args, vars, message) => {
    const result = await runWorker([...args], env(vars));

    expect(result.code).toBe(1);
    expect(stderrLines(result.stderr)).toEqual([expect.stringMatching(message)]);
    expect(cms.requests).toEqual([]);
  });
});

describe('the CMS token', () => {
  beforeEach(() => startCms(TOKEN));

  it('is sent to the CMS and never appears in the output, even at debug level with retries', async () => {
    cms.failNext(1, { status: 500 });
    cms.failNext(1, { status: 429, retryAfter: 0 });

    const result = await runWorker(['--once'], env({ CMS_TOKEN: TOKEN, LOG_LEVEL: 'debug' }));

    expect(result.code).toBe(0);
    expect(storedCount()).toBe(10);
    expect(cms.requests.every((r) => r.hasAuthorization)).toBe(true);
    expect(result.stdout).toContain('CMS request failed; retrying');
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
    expect(result.stdout + result.stderr).not.toContain(Buffer.from(TOKEN).toString('base64'));
  });

  it('a wrong token fails the run with a 401 that never shows the token either', async () => {
    const wrong = 'wrong-secret-0a9b8c7d6e';

    const result = await runWorker(['--once'], env({ CMS_TOKEN: wrong, LOG_LEVEL: 'debug' }));

    expect(result.code).toBe(1);
    expect(stderrLines(result.stderr)).toEqual([expect.stringMatching(/^sync failed: CMS error response: GET \/sections\?locale=en: HTTP 401 /)]);
    expect(result.stdout + result.stderr).not.toContain(wrong);
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
  });
});
