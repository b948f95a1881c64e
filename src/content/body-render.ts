/**
 * `body_html` and `body_text` of an article (docs/specs/api-contract.md, "Choosing fields and body
 * formats"): the Markdown body rendered by markdown-it (CommonMark plus GitHub tables and
 * strikethrough), raw HTML included, then sanitized by sanitize-html with the allow-list of
 * body-allow-list.ts; the text is read from the sanitized HTML (body-text.ts). Decision 0062
 * says why these libraries, decision 0063 why the result is cached here rather than stored at
 * sync time.
 *
 * The libraries are loaded on the first call, not when the API starts (about 16 MB of memory
 * that a process answering no body field never pays), through `createRequire`: their CommonJS
 * builds, like drizzle's (decision 0052), so the call stays synchronous.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { MarkdownIt } from 'markdown-it';
import type MarkdownItCallable from 'markdown-it';
import type sanitizeHtml from 'sanitize-html';
import type { parseDocument } from 'htmlparser2';
import { entryBytes, Lru } from '../lib/lru.js';
import { SANITIZE_OPTIONS } from './body-allow-list.js';
import { htmlToText } from './body-text.js';

export interface RenderedBody {
  readonly html: string;
  readonly text: string;
}

/**
 * Rendered bodies kept per process, by the SHA-256 of the Markdown: an article version is
 * rendered once, then answered from here until it falls out. A fixed budget rather than a
 * share of CACHE_MB: the response cache (which is) already holds whole answers, and this one
 * only saves the render of an answer it evicted (decision 0063).
 */
export const BODY_CACHE_BYTES = 4 * 1024 * 1024;

const cache = new Lru<RenderedBody>(BODY_CACHE_BYTES);

interface Engine {
  markdown: MarkdownIt;
  sanitize: typeof sanitizeHtml;
  parse: typeof parseDocument;
}

let engine: Engine | undefined;

function loadEngine(): Engine {
  if (engine) return engine;
  const require = createRequire(import.meta.url);
  const MarkdownItClass = require('markdown-it') as typeof MarkdownItCallable;
  // 'default' is CommonMark plus GitHub tables and strikethrough. `html: true` passes raw HTML
  // on to the sanitizer (escaping it instead would show partners the tags as text); linkify and
  // typographer are off: neither is CommonMark, and both would rewrite the editors' text.
  const markdown = new MarkdownItClass('default', { html: true, linkify: false, typographer: false });
  engine = {
    markdown,
    sanitize: require('sanitize-html') as typeof sanitizeHtml,
    parse: (require('htmlparser2') as { parseDocument: typeof parseDocument }).parseDocument,
  };
  return engine;
}

function render(markdown: string): RenderedBody {
  const { markdown: md, sanitize, parse } = loadEngine();
  const html = sanitize(md.render(markdown), SANITIZE_OPTIONS);
  return Object.freeze({ html, text: htmlToText(parse, html) });
}

/** The body as safe HTML and as plain text; the same Markdown is rendered once while it stays in the cache. */
export function renderBody(markdown: string): { html: string; text: string } {
  const key = createHash('sha256').update(markdown).digest('base64');
  const cached = cache.get(key);
  if (cached) return cached;
  const rendered = render(markdown);
  cache.set(key, rendered, entryBytes(key, 2 * (rendered.html.length + rendered.text.length)));
  return rendered;
}

/** For tests and measurements: the cache's counters. */
export function bodyCacheStats(): ReturnType<Lru<RenderedBody>['stats']> {
  return cache.stats();
}
