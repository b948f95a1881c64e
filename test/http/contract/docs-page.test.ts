import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { skipWithoutTool } from '../../support/tools/required-tool.js';
import { useOneArticleApi } from './one-article-api.js';
import { buildSnapshot } from '../../support/snapshot-fixture.js';
import { REPO_ROOT } from '../../support/worker.js';
import { chromiumMissing, launchChromium } from '../../support/tools/chromium.js';

/*
 * GET /docs: the reference page, served entirely by us, loaded in a real headless Chromium
 * (Debian's package; nothing here downloads a browser).
 */

const fixture = useOneArticleApi('docs-page-');
const dir = fixture.dir;
let api: TestApi;
let key: string;
type Json = Record<string, any>;

beforeAll(async () => {
  ({ api, key } = fixture);
});

describe('GET /docs over HTTP', () => {
  it('serves the page without a key, with a policy that allows only our own scripts', async () => {
    const res = await fetch(`${api.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toMatch(/unsafe-eval|https?:|\*/);
    const html = await res.text();
    expect(html).toContain('Getting started');
    expect(html).not.toMatch(/<script>(?!<\/script>)|<script\s+(?![^>]*src=)/); // no inline script
    // Relative to the page (so that they keep a path prefix), all on this origin.
    for (const src of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
      expect(src[1], 'relative').not.toMatch(/^(\/|[a-z]+:)/i);
      const url = new URL(src[1]!, `${api.url}/docs`);
      expect(url.origin, 'no other origin').toBe(api.url);
      expect((await fetch(url)).status, src[1]).toBe(200);
    }
  });

  it("keeps helmet's strict policy on the API, and serves nothing of swagger-ui-dist but the files the page uses", async () => {
    const apiCsp = (await fetch(`${api.url}/api/v1/articles`, { headers: { 'X-API-Key': key } })).headers.get('content-security-policy');
    expect(apiCsp).toContain("default-src 'self'");
    expect(apiCsp).not.toContain("'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src");
    expect(apiCsp).toBe((await fetch(`${api.url}/health`)).headers.get('content-security-policy'));
    for (const path of ['/docs/assets/index.html', '/docs/assets/swagger-initializer.js', '/docs/assets/package.json', '/docs/assets/..%2Fpackage.json']) {
      const res = await fetch(`${api.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
    }
  });

  it('revalidates its assets with 304', async () => {
    const first = await fetch(`${api.url}/docs/assets/swagger-ui-bundle.js`);
    expect(first.headers.get('content-type')).toMatch(/javascript/);
    await first.arrayBuffer();
    const again = await fetch(`${api.url}/docs/assets/swagger-ui-bundle.js`, { headers: { 'If-None-Match': first.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });
});

// Nothing may download a browser: skipped with the reason printed where Debian's chromium
// package is not installed, a failure on CI, whose `.ci/run` installs it (required-tool.ts).
const noChromium = skipWithoutTool('chromium', chromiumMissing());
describe.skipIf(noChromium)('GET /docs in headless Chromium', () => {
  let browser: BrowserContext;

  beforeAll(async () => {
    // A fresh profile in the test's own temp dir (playwright passes it as --user-data-dir).
    browser = await launchChromium(dir.path('profile'));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('renders every operation of the document, with no console error and no request to another origin', async () => {
    const doc = (await (await fetch(`${api.url}/api/v1/openapi.json`)).json()) as Json;
    const page = await browser.newPage();
    const problems: string[] = [];
    const origins = new Set<string>();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`failed: ${r.url()}`));
    page.on('request', (r) => origins.add(new URL(r.url()).origin));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()}: ${r.url()}`);
    });

    const response = await page.goto(`${api.url}/docs`);
    expect(response?.status()).toBe(200);
    await page.waitForSelector('.opblock', { timeout: 20_000 });

    const expected = Object.values(doc.paths as Json).flatMap((item) =>
      Object.values(item as Json).map((op: Json) => `operations-${op.tags[0]}-${op.operationId}`),
    );
    expect(expected.length).toBeGreaterThanOrEqual(6);
    const shown = await page.$$eval('.opblock', (els) => els.map((e) => e.id));
    expect(shown.sort()).toEqual([...expected].sort());
    for (const id of expected) expect(await page.isVisible(`#${id}`), id).toBe(true);

    // Opening an operation shows its documented answers: the 304 and the error codes.
    await page.click('#operations-Articles-getArticle .opblock-summary');
    await page.waitForSelector('#operations-Articles-getArticle .responses-table');
    const opened = await page.textContent('#operations-Articles-getArticle');
    for (const text of ['304', 'article_removed', 'not_found', 'If-None-Match']) expect(opened, text).toContain(text);
    expect(await page.textContent('#getting-started')).toContain('X-API-Key');
    // And the schemas, rendered from the zod-generated components.
    await page.click('.models-control');
    await page.waitForSelector('.models .json-schema-2020-12__title');
    const titles = await page.$$eval('.models .json-schema-2020-12__title', (els) => els.map((e) => e.textContent));
    expect(titles.sort()).toEqual(Object.keys(doc.components.schemas).sort());

    const screenshot = dir.path('docs.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(statSync(screenshot).size).toBeGreaterThan(10_000);

    expect(problems).toEqual([]);
    expect([...origins]).toEqual([api.url]);
    await page.close();
    // A browser on two shared cores: generous, and not an assertion about speed.
  }, 120_000);

  it('"Try it out" with its pre-filled values returns real data from the demo\'s sample content', async () => {
    // The demo's content (data/sample/en.json), as `npm run demo` serves it.
    const sample = JSON.parse(readFileSync(join(REPO_ROOT, 'data', 'sample', 'en.json'), 'utf8')) as Json;
    const demoDb = dir.path('demo.db');
    buildSnapshot(demoDb, { sections: sample.sections, articles: sample.articles });
    const demoKey = addKey(demoDb).key;
    const demo = await startApi({ databasePath: demoDb, clock: testClock('2026-11-25T12:00:00Z') });
    const page = await browser.newPage();
    try {
      await page.goto(`${demo.url}/docs`);
      await page.waitForSelector('.opblock', { timeout: 20_000 });
      // What the Authorize dialog does with the key a partner types in.
      await page.evaluate((k) => (globalThis as any).ui.preauthorizeApiKey('ApiKey', k), demoKey);
      const tries: Array<[string, string, (body: Json) => number]> = [
        ['Articles-listArticles', '/api/v1/articles', (b) => b.data.length],
        ['Articles-getArticle', '/api/v1/articles/', (b) => (b.data.body ? 1 : 0)],
        ['Search-searchArticles', '/api/v1/search', (b) => b.data.length],
        ['Sections-listCategories', '/api/v1/categories', (b) => b.data.length],
        // The fixture writes the content, not the change feed a sync keeps: its cursor is the answer here.
        ['Changes-listChanges', '/api/v1/changes', (b) => (typeof b.meta.next === 'string' ? 1 : 0)],
      ];
      for (const [id, path, count] of tries) {
        const op = `#operations-${id}`;
        await page.click(`${op} .opblock-summary`);
        await page.click(`${op} .try-out__btn`);
        const answered = page.waitForResponse((r) => new URL(r.url()).pathname.startsWith(path) && r.request().method() === 'GET', { timeout: 20_000 });
        await page.click(`${op} .btn.execute`);
        const res = await answered;
        expect(res.status(), id).toBe(200);
        expect(count((await res.json()) as Json), id).toBeGreaterThan(0);
      }
    } finally {
      await page.close();
      await demo.close();
    }
  }, 120_000);
});
