import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from '../../src/errors.js';
import { runMain } from '../../src/lib/main-guard.js';

/*
 * A partner's mirror, as docs/partners.md describes it: follow GET /api/v1/changes, apply
 * upserts and deletes to a local copy, store `next` with the copy, start over on
 * invalid_cursor. The copy is a JSON file here; a partner would use their own database.
 *
 *   npm run build
 *   node dist/docs/examples/mirror.js --api http://127.0.0.1:3000 --key-file key.txt \
 *     --locale en --state mirror-en.json [--every 300]
 *
 * Without --every it polls once and exits 1 on any failure. With --every it keeps the mirror
 * up: a failure that may pass (the API unreachable, slow, or answering 5xx or 429) is one line
 * on stderr and the next poll comes at the next interval; a refusal (a 4xx: a revoked key, a
 * wrong locale) stops it, since waiting will not fix it.
 */

/** Whatever the API is doing, one request never holds the mirror longer than this. */
const REQUEST_TIMEOUT_MS = 30_000;

/** A failed poll that the next one may not repeat: --every logs it and polls again later. */
class Unavailable extends UsageError {}

interface Article {
  slug: string;
  [field: string]: unknown;
}

interface Change {
  type: 'upsert' | 'delete';
  slug: string;
  article?: Article;
}

interface MirrorState {
  /** The `next` of the last page applied; null before the first read. */
  cursor: string | null;
  /** The ETag of the answer to `?since=cursor`, to poll with If-None-Match. */
  etag: string | null;
  articles: Record<string, Article>;
}

const EMPTY: MirrorState = { cursor: null, etag: null, articles: {} };

function load(path: string): MirrorState {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as MirrorState;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return structuredClone(EMPTY);
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message;

/** The copy and its cursor are saved together, atomically: a crash never leaves them apart. */
function save(path: string, state: MirrorState): void {
  try {
    writeFileSync(`${path}.tmp`, JSON.stringify(state));
    renameSync(`${path}.tmp`, path);
  } catch (error) {
    throw new UsageError(`cannot write ${path} (${errorCode(error)}): check --state`);
  }
}

/** Why a request got no answer, in the system's words ("connect ECONNREFUSED 127.0.0.1:3000"). */
function cause(error: unknown): string {
  if ((error as Error).name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  const inner = (error as { cause?: { message?: string; code?: string } }).cause;
  return inner?.message || inner?.code || (error as Error).message;
}

interface Page {
  data: Change[];
  meta: { next: string; has_more: boolean };
}

type Answer = Page & { error?: { code: string; message: string } };

/** One page of the feed, or 304 (nothing new), or invalid_cursor; any other answer is thrown as one line. */
async function getChanges(url: URL, headers: Record<string, string>): Promise<{ body: Page; etag: string | null } | 304 | 'invalid_cursor'> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, { headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    text = await res.text();
  } catch (error) {
    throw new Unavailable(`cannot reach the API at ${url.origin}: ${cause(error)}`);
  }
  if (res.status === 304) return 304;
  let body: Answer | undefined;
  try {
    body = JSON.parse(text) as Answer;
  } catch {
    body = undefined;
  }
  if (res.ok && body) return { body, etag: res.headers.get('etag') };
  if (res.status === 400 && body?.error?.code === 'invalid_cursor') return 'invalid_cursor';
  const why = body ? (body.error?.message ?? 'no message') : 'not JSON: is --api the address of the API?';
  const message = `the API at ${url.origin} answered ${res.status}: ${why}`;
  throw res.status >= 500 || res.status === 429 ? new Unavailable(message) : new UsageError(message);
}

function readKey(path: string): string {
  let key: string;
  try {
    key = readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new UsageError(`cannot read the key file ${path} (${errorCode(error)}): --key-file names the file holding your API key`);
  }
  if (key === '') throw new UsageError(`the key file ${path} is empty: put your API key in it`);
  return key;
}

function seconds(value: string): number {
  const parsed = Number(value);
  // Whole seconds from 1: a fraction such as 0.001 would poll in a near-tight loop. And
  // setTimeout fires at once past about 24 days, so a day is the most an interval can be.
  if (!/^[0-9]+$/.test(value) || parsed < 1 || parsed > 86_400) {
    throw new InvalidArgumentError('It needs a whole number of seconds from 1 to 86400, e.g. 300.');
  }
  return parsed;
}

function apiAddress(value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new InvalidArgumentError('It needs the address of the API, e.g. http://127.0.0.1:3000.');
  }
  return value;
}

/** Reads every change after the stored cursor and applies it; returns what it did. */
async function pollOnce(options: { api: string; key: string; locale: string; statePath: string }) {
  let state = load(options.statePath);
  const done = { pages: 0, upserts: 0, deletes: 0, restarted: false, notModified: false };
  for (;;) {
    const url = new URL('/api/v1/changes', options.api);
    url.searchParams.set('locale', options.locale);
    if (state.cursor !== null) url.searchParams.set('since', state.cursor);
    const headers: Record<string, string> = { 'X-API-Key': options.key };
    if (state.etag !== null) headers['If-None-Match'] = state.etag;
    const page = await getChanges(url, headers);
    // Nothing new since the last poll: the cached answer is still current.
    if (page === 304) {
      done.notModified = true;
      break;
    }
    if (page === 'invalid_cursor') {
      if (done.restarted) throw new UsageError('the API refused the cursor of a fresh start (invalid_cursor)');
      // The cursor is too old (or from another snapshot): rebuild the copy from the beginning.
      state = structuredClone(EMPTY);
      done.restarted = true;
      continue;
    }
    const { body, etag } = page;
    for (const change of body.data) {
      if (change.type === 'upsert') {
        state.articles[change.slug] = change.article!;
        done.upserts += 1;
      } else {
        delete state.articles[change.slug];
        done.deletes += 1;
      }
    }
    done.pages += 1;
    const since = state.cursor;
    state.cursor = body.meta.next;
    // An empty page is the answer the next poll will ask for again: its ETag makes that a 304.
    state.etag = body.data.length === 0 && body.meta.next === since ? etag : null;
    save(options.statePath, state);
    if (!body.meta.has_more) break;
  }
  return { ...done, articles: Object.keys(state.articles).length };
}

runMain(async () => {
  const cli = new Command('mirror')
    .requiredOption('--api <url>', 'base address of the API, e.g. http://127.0.0.1:3000', apiAddress)
    .requiredOption('--key-file <path>', 'a file holding your API key (kept out of the process list)')
    .option('--locale <locale>', 'en or zh', 'en')
    .requiredOption('--state <path>', 'the JSON file holding the copy and its cursor')
    .option('--every <seconds>', 'poll again every this many seconds (at least 300 in production)', seconds)
    .exitOverride()
    .configureOutput({ outputError: () => {} });
  try {
    cli.parse(process.argv);
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) return; // --help
    throw new UsageError((error as Error).message.replace(/^error: /, ''));
  }
  const opts = cli.opts<{ api: string; keyFile: string; locale: string; state: string; every?: number }>();
  const key = readKey(opts.keyFile);
  for (;;) {
    try {
      const result = await pollOnce({ api: opts.api, key, locale: opts.locale, statePath: opts.state });
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } catch (error) {
      if (opts.every === undefined || !(error instanceof Unavailable)) throw error;
      process.stderr.write(`${error.message}; polling again in ${opts.every} s\n`);
    }
    if (opts.every === undefined) return;
    await sleep(opts.every * 1000);
  }
});
