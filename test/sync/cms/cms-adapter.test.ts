import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { CmsError } from '../../../sync/cms/errors.js';
import { createHttpCmsAdapter } from '../../../sync/cms/http-adapter.js';
import { createCmsHttpClient } from '../../../sync/cms/http-client.js';
import { parseArticle } from '../../../sync/cms/schemas.js';
import type { CmsAdapter } from '../../../sync/cms/types.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';

let cms: TestCms;
let adapter: CmsAdapter;

beforeEach(async () => {
  cms = await startTestCms();
  const client = createCmsHttpClient({
    baseUrl: cms.url,
    timeoutMs: 2000,
    maxAttempts: 3,
    retryBudgetMs: 5000,
    baseDelayMs: 1,
    maxDelayMs: 5,
    maxResponseBytes: 5_000_000,
    logger: createLogger({ level: 'silent' }),
    sleep: async () => undefined,
  });
  adapter = createHttpCmsAdapter({ client });
});

afterEach(async () => {
  await cms.close();
});

const firstPage = { locale: 'en', page: 1, perPage: 10 } as const;

async function failure(promise: Promise<unknown>): Promise<CmsError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CmsError);
  return error as CmsError;
}

describe('HTTP CMS adapter: articles', () => {
  it('maps contract records onto internal article records', async () => {
    cms.store.upsertArticle(
      rawArticle({
        id: 'art-1042',
        slug: 'ipg-q3-results',
        title: 'IPG reports Q3 results',
        section_slug: 'fiber-lasers',
        author: null,
        image: { url: 'https://img.example.com/a.jpg', alt: 'A fiber laser', credit: 'Sam Lee', credit_url: 'https://photos.example.com/@samlee', source_url: 'https://photos.example.com/photo/123' },
        published_at: '2026-10-20T16:00:00+08:00',
        updated_at: '2026-10-21T09:30:00Z',
        url: 'https://news.example.com/en/ipg-q3-results',
      }),
    );
    const page = await adapter.listArticles(firstPage);
    expect(page).toMatchObject({ page: 1, perPage: 10, total: 1, pages: 1, rejected: [] });
    expect(page.articles[0]).toEqual({
      cmsId: 'art-1042',
      locale: 'en',
      slug: 'ipg-q3-results',
      status: 'published',
      title: 'IPG reports Q3 results',
      excerpt: expect.any(String),
      body: expect.stringContaining('## Article'),
      sectionSlug: 'fiber-lasers',
      author: '',
      image: { url: 'https://img.example.com/a.jpg', alt: 'A fiber laser', credit: 'Sam Lee', creditUrl: 'https://photos.example.com/@samlee', sourceUrl: 'https://photos.example.com/photo/123' },
      publishedAt: '2026-10-20T08:00:00Z',
      updatedAt: '2026-10-21T09:30:00Z',
      url: 'https://news.example.com/en/ipg-q3-results',
    });
  });

  it('normalizes +08:00 and fractional timestamps to whole-second Z', async () => {
    cms.store.upsertArticle(
      rawArticle({ locale: 'zh', published_at: '2026-10-21T00:30:00.750+08:00', updated_at: '2026-10-21T08:00:00+0800' }),
    );
    const [article] = (await adapter.listArticles({ ...firstPage, locale: 'zh' })).articles;
    expect(article?.publishedAt).toBe('2026-10-20T16:30:00Z');
    expect(article?.updatedAt).toBe('2026-10-21T00:00:00Z');
  });

  it('sends the page, the published filter and an encoded updated_since', async () => {
    await adapter.listArticles({ locale: 'zh', page: 3, perPage: 100, publishedOnly: true, updatedSince: '2026-10-20T16:00:00+08:00' });
    expect(cms.requests[0]?.path).toBe(
      '/articles?locale=zh&page=3&per_page=100&status=published&updated_since=2026-10-20T16%3A00%3A00%2B08%3A00',
    );
  });

  it('keeps text in any script and with markup-like fragments as sent', async () => {
    const title = 'Laser 激光 🚀 \u200f"quoted" \\back\\slash <b>bold</b> & עברית';
    cms.store.upsertArticle(rawArticle({ title, body_markdown: `${title}\n\n</script><!--` }));
    const [article] = (await adapter.listArticles(firstPage)).articles;
    expect(article?.title).toBe(title);
    expect(article?.body).toBe(`${title}\n\n</script><!--`);
  });

  it('rejects a bad record with its id and a reason naming the fields, and accepts the rest', async () => {
    cms.store.upsertArticles([rawArticle({ id: 'good-1' }), rawArticle({ id: 'bad-2' }), rawArticle({ id: 'good-3' })]);
    cms.badRecordNext({ published_at: 'yesterday', title: 42 }, 1);
    const page = await adapter.listArticles(firstPage);
    expect(page.articles.map((a) => a.cmsId)).toEqual(['good-1', 'good-3']);
    expect(page.rejected).toEqual([
      { cmsId: 'bad-2', status: 'published', reason: 'title: expected string, got number; published_at: not an ISO 8601 timestamp with offset' },
    ]);
    expect(page.total).toBe(3);
  });

  it.each([
    [{ url: undefined }, 'url: missing'],
    [{ locale: 'zh' }, 'locale: expected "en", got "zh"'],
    [{ slug: 'not a/slug' }, 'slug: not URL-safe'],
    [{ updated_at: '2026-10-21T09:30:00' }, 'updated_at: not an ISO 8601 timestamp with offset'],
    [{ image: { url: 'https://img.example.com/a.jpg', alt: '', credit: '' } }, 'image.credit_url: missing; image.source_url: missing'],
    [{ title: 'x'.repeat(1001) }, 'title: longer than 1000 characters'],
    [{ url: 'javascript:alert(1)' }, 'url: not an absolute http(s) URL'],
    [{ author: ['Jane'] }, 'author: expected string, got array'],
    [{ status: '' }, 'status: empty'],
  ])('rejects a record patched with %j', async (patch, reason) => {
    cms.store.upsertArticles([rawArticle({ id: 'victim' }), rawArticle({ id: 'bystander' })]);
    cms.badRecordNext(patch);
    const page = await adapter.listArticles(firstPage);
    expect(page.rejected).toHaveLength(1);
    expect(page.rejected[0]?.cmsId).toBe('victim');
    expect(page.rejected[0]?.reason).toContain(reason);
    expect(page.articles.map((a) => a.cmsId)).toEqual(['bystander']);
  });

  it.each([
    'JaVaScRiPt:alert(1)',
    '\u0001 java\tscript:alert(1)',
    'javascript&#58;alert(1)',
    'data:text/html,<script>alert(1)</script>',
    '//evil.example.com/x',
    'https://news.example.com@evil.example.com/x',
  ])('skips an article whose own url is unsafe (%j), with the reason', async (url) => {
    cms.store.upsertArticles([rawArticle({ id: 'victim' }), rawArticle({ id: 'bystander' })]);
    cms.badRecordNext({ url });
    const page = await adapter.listArticles(firstPage);
    expect(page.rejected).toEqual([{ cmsId: 'victim', status: 'published', reason: expect.stringMatching(/^url: not an absolute http\(s\) URL/) }]);
    expect(page.articles.map((a) => a.cmsId)).toEqual(['bystander']);
  });

  it('drops an image whose url is unsafe and keeps the article', async () => {
    cms.store.upsertArticles([rawArticle({ id: 'victim' })]);
    cms.badRecordNext({ image: { url: ' vbscript:msgbox(1)', alt: 'a', credit: 'c', credit_url: 'https://c.example.com/', source_url: 'https://s.example.com/' } });
    const page = await adapter.listArticles(firstPage);
    expect(page.rejected).toEqual([]);
    expect(page.articles[0]?.image).toBeNull();
  });

  it('empties an unsafe credit_url or source_url and keeps the rest of the image, normalised', async () => {
    cms.store.upsertArticles([rawArticle({ id: 'victim' })]);
    cms.badRecordNext({
      image: { url: 'HTTPS://IMG.example.com/a.jpg', alt: 'a', credit: 'c', credit_url: 'java\nscript:alert(1)', source_url: 'data:,x' },
    });
    const page = await adapter.listArticles(firstPage);
    expect(page.articles[0]?.image).toEqual({ url: 'https://img.example.com/a.jpg', alt: 'a', credit: 'c', creditUrl: '', sourceUrl: '' });
  });

  it('rejects a record whose id is unreadable with a null id', async () => {
    cms.store.upsertArticles([rawArticle(), rawArticle()]);
    cms.badRecordNext({ id: 17 });
    const page = await adapter.listArticles(firstPage);
    expect(page.rejected).toEqual([{ cmsId: null, status: 'published', reason: 'id: expected string, got number' }]);
    expect(page.articles).toHaveLength(1);
  });

  it('ignores fields the contract does not name', async () => {
    cms.store.upsertArticle(rawArticle({ id: 'extra' }));
    cms.badRecordNext({ tags: ['x'], internal_notes: { a: 1 } });
    const page = await adapter.listArticles(firstPage);
    expect(page.rejected).toEqual([]);
    expect(page.articles[0]).not.toHaveProperty('tags');
  });

  it('rejects a body past two million characters', () => {
    const result = parseArticle(rawArticle({ id: 'big', body_markdown: 'x'.repeat(2_000_001) }), 'en');
    expect(result).toEqual({ ok: false, rejected: { cmsId: 'big', status: 'published', reason: 'body_markdown: longer than 2000000 characters' } });
  });

  it('rejects a record whose locale is nested too deep to print, instead of failing the page', () => {
    let deep: unknown = 'en';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const result = parseArticle({ ...rawArticle({ id: 'deep' }), locale: deep }, 'en');
    expect(result).toMatchObject({ ok: false, rejected: { cmsId: 'deep', reason: expect.stringContaining('locale') } });
  });

  it('rejects slugs that name no article in a URL: ".", ".." and prototype keys', () => {
    for (const slug of ['.', '..', '__proto__', 'constructor', 'prototype']) {
      expect(parseArticle(rawArticle({ id: `s-${slug}`, slug }), 'en'), slug).toMatchObject({ ok: false, rejected: { cmsId: `s-${slug}` } });
    }
    for (const slug of ['a.b', '.well', 'v1.0', '..x']) expect(parseArticle(rawArticle({ id: `ok-${slug}`, slug }), 'en').ok, slug).toBe(true);
  });

  it('rejects a record that is not an object', () => {
    expect(parseArticle(null, 'en')).toEqual({ ok: false, rejected: { cmsId: null, status: null, reason: 'record: expected object, got null' } });
  });

  it('reports the status of a rejected record when it is readable, and null when it is not', () => {
    const archived = parseArticle({ ...rawArticle({ id: 'gone', status: 'archived' }), url: null }, 'en');
    expect(archived).toMatchObject({ ok: false, rejected: { cmsId: 'gone', status: 'archived' } });
    for (const status of [42, '', 'x'.repeat(51), undefined]) {
      expect(parseArticle({ ...rawArticle({ id: 'odd' }), status }, 'en')).toMatchObject({ ok: false, rejected: { cmsId: 'odd', status: null } });
    }
  });
});

describe('HTTP CMS adapter: responses of the wrong shape', () => {
  it('fails a page without data, not retryable and not retried', async () => {
    cms.failNext(1, { status: 200, body: '{"items":[],"meta":{"page":1,"per_page":10,"total":"3","pages":1}}' });
    const error = await failure(adapter.listArticles(firstPage));
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: false });
    expect(error.message).toBe(
      'CMS sent an unexpected response: GET /articles?locale=en&page=1&per_page=10: data: missing; meta.total: expected number, got string',
    );
    expect(cms.requests).toHaveLength(1);
  });

  it('fails a page that is a bare array', async () => {
    cms.failNext(1, { status: 200, body: '[]' });
    const error = await failure(adapter.listArticles(firstPage));
    expect(error.message).toContain('response: expected object, got array');
  });

  it('fails a page whose meta.page is not the page asked for', async () => {
    cms.store.upsertArticle(rawArticle());
    cms.failNext(1, { status: 200, body: '{"data":[],"meta":{"page":1,"per_page":10,"total":1,"pages":1}}' });
    const error = await failure(adapter.listArticles({ ...firstPage, page: 2 }));
    expect(error).toMatchObject({ kind: 'invalid_response' });
    expect(error.message).toContain('meta.page is 1, expected 2');
  });

  it('fails a page with more records than asked for', async () => {
    cms.store.upsertArticles([rawArticle(), rawArticle(), rawArticle()]);
    cms.redirectNext(1, `${cms.url}/articles?locale=en&page=1&per_page=3`);
    const error = await failure(adapter.listArticles({ ...firstPage, perPage: 2 }));
    expect(error.message).toContain('3 records on a page of 2');
  });

  it('fails a sections answer of the wrong shape', async () => {
    cms.failNext(1, { status: 200, body: '{"data":{"id":"sec-1"}}' });
    const error = await failure(adapter.listSections('en'));
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: false });
    expect(error.message).toContain('GET /sections?locale=en: data: expected array, got object');
  });
});

describe('HTTP CMS adapter: sections', () => {
  it('maps every section of the locale, inactive ones included, and rejects a bad one', async () => {
    cms.store.upsertSection('zh', rawSection({ id: 'sec-a', slug: 'fiber-lasers', name: '光纤激光', position: 2, updated_at: '2026-10-01T16:00:00+08:00' }));
    cms.store.upsertSection('zh', rawSection({ id: 'sec-b', active: false, position: 1 }));
    cms.store.upsertSection('zh', rawSection({ id: 'sec-c', position: 3, slug: 'bad slug' }));
    cms.store.upsertSection('en', rawSection({ id: 'sec-en' }));
    const { sections, rejected } = await adapter.listSections('zh');
    expect(sections.map((s) => [s.cmsId, s.active])).toEqual([
      ['sec-b', false],
      ['sec-a', true],
    ]);
    expect(sections[1]).toEqual({
      cmsId: 'sec-a',
      locale: 'zh',
      slug: 'fiber-lasers',
      name: '光纤激光',
      description: expect.any(String),
      active: true,
      position: 2,
      updatedAt: '2026-10-01T08:00:00Z',
    });
    expect(rejected).toEqual([{ cmsId: 'sec-c', status: null, reason: expect.stringContaining('slug: not URL-safe') }]);
  });
});
