/**
 * What renderBody costs (docs/benchmarks.md, "body_html and body_text"): the memory its
 * libraries take once loaded, and the time of one render (cache missed) on the benchmark's
 * bodies (generateCorpus, as the sync benchmark builds them) and on the demo's articles (which
 * also hold links and quotes). Not a test: `npx tsc -p tsconfig.json && node --expose-gc
 * --max-semi-space-size=16 dist/test/body/render-cost.js [bodies per locale, default 10000]`
 * (the API's own flag: decision 0047).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const perLocale = Number(process.argv[2] ?? 10_000);

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

function memory(): { rss: number; heap: number } {
  gc!();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const before = memory();
const { renderBody } = await import('../../src/content/body-render.js');
const started = performance.now();
renderBody('# First\n\nThe [first](https://example.com/) render loads the libraries.');
const firstMs = performance.now() - started;
const loaded = memory();
console.log(`libraries loaded by the first render: ${firstMs.toFixed(0)} ms, RSS +${mb(loaded.rss - before.rss)} MB, heap +${mb(loaded.heap - before.heap)} MB`);

// The fixtures load after the measurement above, which would otherwise count their modules.
const { generateCorpus } = await import('../support/cms-fixtures.js');
const { REPO_ROOT } = await import('../support/worker.js');
// Distinct bodies, so that every call below misses the cache (as the first request for an article version does).
const benchBodies = [...new Set((['en', 'zh'] as const).flatMap((locale) => generateCorpus({ locale, count: perLocale, seed: locale === 'en' ? 1 : 2 }).map((a) => a.body_markdown)))];
// Run from dist/, where REPO_ROOT is dist/ itself.
const root = /[\\/]dist[\\/]?$/.test(REPO_ROOT) ? join(REPO_ROOT, '..') : REPO_ROOT;
const demoBodies = ['en', 'zh'].flatMap((locale) =>
  (JSON.parse(readFileSync(join(root, 'data', 'sample', `${locale}.json`), 'utf8')) as { articles: { body_markdown: string }[] }).articles.map((a) => a.body_markdown),
);

function measure(label: string, bodies: readonly string[]): void {
  // A warm-up pass over other text (the JIT), then each body once.
  for (let i = 0; i < 200; i++) renderBody(`## Warm ${i}\n\n${bodies[i % bodies.length]} ${i}`);
  // CPU time (user + system) of the process, not wall time: on a shared machine the wall time
  // holds other processes' turns. The resolution is 1 µs.
  const times: number[] = [];
  const walls: number[] = [];
  let htmlBytes = 0;
  let textBytes = 0;
  let markdownBytes = 0;
  for (const body of bodies) {
    const wall = performance.now();
    const cpu = process.cpuUsage();
    const { html, text } = renderBody(body);
    const used = process.cpuUsage(cpu);
    times.push(used.user + used.system);
    walls.push((performance.now() - wall) * 1000);
    htmlBytes += Buffer.byteLength(html);
    textBytes += Buffer.byteLength(text);
    markdownBytes += Buffer.byteLength(body);
  }
  const total = times.reduce((a, b) => a + b, 0);
  times.sort((a, b) => a - b);
  walls.sort((a, b) => a - b);
  const n = bodies.length;
  console.log(
    `${label}: ${n} bodies, CPU median ${quantile(times, 0.5).toFixed(0)} µs, p99 ${quantile(times, 0.99).toFixed(0)} µs, mean ${(total / n).toFixed(0)} µs (wall median ${quantile(walls, 0.5).toFixed(0)} µs);` +
      ` Markdown ${(markdownBytes / n).toFixed(0)} B, HTML ${(htmlBytes / n).toFixed(0)} B, text ${(textBytes / n).toFixed(0)} B a body;` +
      ` at 110,000 articles: ${((110_000 * total) / n / 1e6).toFixed(1)} s of CPU, ${mb((110_000 * (htmlBytes + textBytes)) / n)} MB of HTML and text`,
  );
}

measure('benchmark corpus', benchBodies);
measure('demo articles', demoBodies);
const after = memory();
console.log(`after the runs (4 MB cache full): RSS ${mb(after.rss)} MB, heap ${mb(after.heap)} MB (before loading: RSS ${mb(before.rss)} MB, heap ${mb(before.heap)} MB)`);
