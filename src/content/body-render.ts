// placeholder: replaced by the body-html branch
/*
 * The article body as HTML and as plain text, for `fields=body_html` and `fields=body_text` on
 * the single article. The body-html branch renders CommonMark plus GFM and sanitizes it; this
 * placeholder only escapes the Markdown into one paragraph, so that the fields can be wired.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function renderBody(markdown: string): { html: string; text: string } {
  return { html: `<p>${markdown.replace(/[&<>"']/g, (c) => ESCAPES[c]!)}</p>`, text: markdown };
}
