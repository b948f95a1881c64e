/**
 * What survives in `body_html`: the sanitizer's allow-list (docs/specs/api-contract.md,
 * "Choosing fields and body formats"; decision 0062). Everything not named here is removed: an
 * element not listed loses its tags (its text stays, escaped), except the raw-text and
 * embedding elements in DROPPED_WITH_CONTENT, whose own text goes too (an element inside one
 * is judged on its own); an attribute not listed is removed.
 *
 * The output is serialized by sanitize-html from its own tree: text and attribute values are
 * escaped (`<`, `>`, `&`, `"`), so whatever the input's parser made of broken or nested markup,
 * the only markup a browser can find in the output is the elements listed here with the
 * attributes listed here. None of them is a raw-text element (script, style, textarea, title,
 * xmp, noscript...), so the browser's parse of the output cannot differ from ours (no mutation
 * XSS).
 */
import type { IOptions, Attributes, Transformer } from 'sanitize-html';
import { checkPublicUrl, MAX_URL_LENGTH } from '../lib/safe-url.js';

/** Paragraphs, headings, lists, links, images, emphasis, strikethrough, code, quotes, tables, rules, line breaks. */
export const ALLOWED_ELEMENTS = [
  'p',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'ul', 'ol', 'li',
  'a', 'img',
  'em', 'strong', 'b', 'i', 'del', 's',
  'code', 'pre', 'blockquote',
  'table', 'thead', 'tbody', 'tr', 'th', 'td',
  'hr', 'br',
] as const;

/** Per element, the attributes kept; each is set by the transforms below, never copied blindly. */
export const ALLOWED_ATTRIBUTES: Record<string, string[]> = {
  a: ['href', 'title', 'rel'],
  img: ['src', 'alt', 'title'],
  ol: ['start'],
  th: ['align'],
  td: ['align'],
  // Fenced code's info string (```ts): a class name, never a script hook.
  code: ['class'],
};

/** Elements removed with their text: it is code, styles or fallback, not article text. */
export const DROPPED_WITH_CONTENT = [
  'script', 'style', 'textarea', 'option', 'select', 'noscript', 'noembed', 'noframes', 'template',
  'title', 'xmp', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'svg', 'math', 'head',
];

/** Links leave the partner's page whatever their host: the opened page gets neither `window.opener` nor a Referer (decision 0062). */
export const LINK_REL = 'noopener noreferrer';

/** Longest `title`/`alt` kept: enough for any caption, and no attribute a megabyte long. */
const MAX_TEXT_ATTRIBUTE = 1000;

/**
 * The link target a partner's page may hold: an absolute http(s) URL, in the form a browser
 * resolves it (src/lib/safe-url.ts: case, entities, controls, tabs and `\` are all settled by
 * the WHATWG parser, as in the browser), or a `mailto:` address. Relative URLs have no base on
 * a partner's page, so they go too.
 */
export function safeLinkHref(value: string): string | undefined {
  const verdict = checkPublicUrl(value);
  if (verdict.ok) return verdict.href;
  if (value.length > MAX_URL_LENGTH) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'mailto:' && url.href.length <= MAX_URL_LENGTH ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** An image source: an absolute http(s) URL only (no `data:`, no `mailto:`). */
export function safeImageSrc(value: string): string | undefined {
  const verdict = checkPublicUrl(value);
  return verdict.ok ? verdict.href : undefined;
}

function textAttribute(attribs: Attributes, name: string, into: Attributes): void {
  const value = attribs[name];
  if (value !== undefined && value !== '') into[name] = value.slice(0, MAX_TEXT_ATTRIBUTE);
}

const link: Transformer = (_tag, attribs) => {
  const href = attribs.href === undefined ? undefined : safeLinkHref(attribs.href);
  // A link without a safe target keeps its text in an `<a>` without attributes, which is no
  // link. (Renaming the tag to one outside the allow-list would unwrap it, but sanitize-html
  // 2.18 then writes that name as the closing tag of the next element at the same depth.)
  if (href === undefined) return { tagName: 'a', attribs: {} };
  const kept: Attributes = { href, rel: LINK_REL };
  textAttribute(attribs, 'title', kept);
  return { tagName: 'a', attribs: kept };
};

const image: Transformer = (_tag, attribs) => {
  const src = attribs.src === undefined ? undefined : safeImageSrc(attribs.src);
  const kept: Attributes = { alt: (attribs.alt ?? '').slice(0, MAX_TEXT_ATTRIBUTE) };
  // An image without a safe source is removed by exclusiveFilter below.
  if (src !== undefined) kept.src = src;
  textAttribute(attribs, 'title', kept);
  return { tagName: 'img', attribs: kept };
};

/** markdown-it writes a GitHub table column's alignment as `style="text-align:right"`; style attributes are not allowed, `align` says the same. */
const cell: Transformer = (tag, attribs) => {
  const align = /^\s*text-align\s*:\s*(left|center|right)\s*;?\s*$/i.exec(attribs.style ?? '')?.[1] ?? attribs.align;
  const kept: Attributes = {};
  if (align && /^(left|center|right)$/i.test(align)) kept.align = align.toLowerCase();
  return { tagName: tag, attribs: kept };
};

const orderedList: Transformer = (tag, attribs) => {
  const kept: Attributes = {};
  if (attribs.start !== undefined && /^\d{1,9}$/.test(attribs.start)) kept.start = attribs.start;
  return { tagName: tag, attribs: kept };
};

/** A fenced block's language (```ts) as markdown-it writes it; only a plain name is kept, for syntax highlighters. */
const code: Transformer = (tag, attribs) => {
  const kept: Attributes = {};
  const language = /^language-[\w+#.-]{1,40}$/.exec(attribs.class ?? '')?.[0];
  if (language) kept.class = language;
  return { tagName: tag, attribs: kept };
};

export const SANITIZE_OPTIONS: IOptions = {
  allowedTags: [...ALLOWED_ELEMENTS],
  allowedAttributes: ALLOWED_ATTRIBUTES,
  allowedClasses: { code: ['language-*'] },
  // Belt and braces: the transforms already allow only these (and only http(s) in `src`).
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  allowProtocolRelative: false,
  allowedStyles: {},
  allowVulnerableTags: false,
  disallowedTagsMode: 'discard',
  nonTextTags: DROPPED_WITH_CONTENT,
  transformTags: { a: link, img: image, th: cell, td: cell, ol: orderedList, code },
  // An image whose source was not safe: nothing to show (its alt text is lost with it).
  exclusiveFilter: (frame) => frame.tag === 'img' && frame.attribs.src === undefined,
};
