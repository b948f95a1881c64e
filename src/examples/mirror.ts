import { Command } from 'commander';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from '../errors.js';
import { runMain } from '../main-guard.js';

/*
 * A partner's mirror, as the README's guide describes it: follow GET /api/v1/changes, apply
 * upserts and deletes to a local copy, store `next` with the copy, start over on
 * invalid_cursor. The copy is a JSON file here; a partner would use their own database.
 *
 *   npm run build
 *   node dist/src/examples/mirror.js --api http://127.0.0.1:3000 --key-file key.txt \
 *     --locale en --state mirror-en.json [--every 300]
 */

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

/** The copy and its cursor are saved together, atomically: a crash never leaves them apart. */
function save(path: string, state: MirrorState): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(state));
  renameSync(`${path}.tmp`, path);
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
    const res = await fetch(url, { headers });
    // Nothing new since the last poll: the cached answer is still current.
    if (res.status === 304) {
      done.notModified = true;
      break;
    }
    const body = (await res.json()) as {
      data: Change[];
      meta: { next: string; has_more: boolean };
      error?: { code: string; message: string };
    };
    if (res.status === 400 && body.error?.code === 'invalid_cursor' && !done.restarted) {
      // The cursor is too old (or from another snapshot): rebuild the copy from the beginning.
      state = structuredClone(EMPTY);
      done.restarted = true;
      continue;
    }
    if (!res.ok) throw new UsageError(`the API answered ${res.status}: ${body.error?.message ?? 'no message'}`);
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
    state.etag = body.data.length === 0 && body.meta.next === since ? res.headers.get('etag') : null;
    save(options.statePath, state);
    if (!body.meta.has_more) break;
  }
  return { ...done, articles: Object.keys(state.articles).length };
}

runMain(async () => {
  const cli = new Command('mirror')
    .requiredOption('--api <url>', 'base address of the API, e.g. http://127.0.0.1:3000')
    .requiredOption('--key-file <path>', 'a file holding your API key (kept out of the process list)')
    .option('--locale <locale>', 'en or zh', 'en')
    .requiredOption('--state <path>', 'the JSON file holding the copy and its cursor')
    .option('--every <seconds>', 'poll again every this many seconds (at least 300 in production)')
    .exitOverride()
    .configureOutput({ outputError: () => {} });
  try {
    cli.parse(process.argv);
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/^error: /, ''));
  }
  const opts = cli.opts<{ api: string; keyFile: string; locale: string; state: string; every?: string }>();
  const key = readFileSync(opts.keyFile, 'utf8').trim();
  for (;;) {
    const result = await pollOnce({ api: opts.api, key, locale: opts.locale, statePath: opts.state });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (opts.every === undefined) return;
    await sleep(Number(opts.every) * 1000);
  }
});
