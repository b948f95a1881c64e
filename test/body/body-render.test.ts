import { describe, expect, it } from 'vitest';
import { bodyCacheStats, renderBody } from '../../src/content/body-render.js';

/*
 * body_html and body_text of ordinary Markdown (docs/specs/api-contract.md, "Choosing fields and body
 * formats"): the structure survives the sanitizer, links carry rel, the text keeps what a
 * reader reads. Hostile bodies: hostile-corpus.test.ts.
 */

const html = (markdown: string) => renderBody(markdown).html;
const text = (markdown: string) => renderBody(markdown).text;

describe('body_html keeps the structure of ordinary Markdown', () => {
  it('headings, paragraphs, emphasis, strikethrough, line breaks and rules', () => {
    expect(html('# One\n\n## Two\n\n###### Six\n\nA *b* **c** ~~d~~ _e_ __f__\\\nnext  \nlast\n\n---\n\nafter')).toBe(
      '<h1>One</h1>\n<h2>Two</h2>\n<h6>Six</h6>\n' +
        '<p>A <em>b</em> <strong>c</strong> <s>d</s> <em>e</em> <strong>f</strong><br />\nnext<br />\nlast</p>\n<hr />\n<p>after</p>\n',
    );
  });

  it('bullet, ordered (with its start) and nested lists', () => {
    expect(html('- a\n- b\n  - c\n\n3. x\n4. y')).toBe(
      '<ul>\n<li>a</li>\n<li>b\n<ul>\n<li>c</li>\n</ul>\n</li>\n</ul>\n<ol start="3">\n<li>x</li>\n<li>y</li>\n</ol>\n',
    );
  });

  it('GitHub tables, with alignment as align (no style attribute)', () => {
    const out = html('| Laser | Power |\n|:--|--:|\n| fiber | 10 kW |\n| CO2 | *2 kW* |');
    expect(out).toContain('<table>\n<thead>\n<tr>\n<th align="left">Laser</th>\n<th align="right">Power</th>');
    expect(out).toContain('<tbody>\n<tr>\n<td align="left">fiber</td>\n<td align="right">10 kW</td>\n</tr>');
    expect(out).toContain('<td align="right"><em>2 kW</em></td>');
    expect(out).not.toContain('style');
  });

  it('code spans and fenced code with < and & escaped, and the language kept as a class', () => {
    expect(html('Use `a<b && c>d`.')).toBe('<p>Use <code>a&lt;b &amp;&amp; c&gt;d</code>.</p>\n');
    expect(html('```cpp\nif (a < b) { x = "<script>"; }\n```')).toBe(
      '<pre><code class="language-cpp">if (a &lt; b) { x = "&lt;script&gt;"; }\n</code></pre>\n',
    );
    expect(html('    indented <b>\n')).toBe('<pre><code>indented &lt;b&gt;\n</code></pre>\n');
  });

  it('images with alt and title, quotes', () => {
    expect(html('![A 10 kW source](https://img.example.com/a.jpg "Lumora")')).toBe(
      '<p><img alt="A 10 kW source" src="https://img.example.com/a.jpg" title="Lumora" /></p>\n',
    );
    expect(html('> quoted\n> > nested')).toBe('<blockquote>\n<p>quoted</p>\n<blockquote>\n<p>nested</p>\n</blockquote>\n</blockquote>\n');
  });

  it('links: http(s) and mailto carry rel="noopener noreferrer", in the form a browser resolves', () => {
    expect(html('[report](https://news.example.com/en/a?x=1&y=2 "More")')).toBe(
      '<p><a href="https://news.example.com/en/a?x=1&amp;y=2" rel="noopener noreferrer" title="More">report</a></p>\n',
    );
    expect(html('<HTTPS://Example.COM/x>')).toBe('<p><a href="https://example.com/x" rel="noopener noreferrer">HTTPS://Example.COM/x</a></p>\n');
    expect(html('[mail](mailto:desk@example.com)')).toBe('<p><a href="mailto:desk@example.com" rel="noopener noreferrer">mail</a></p>\n');
    expect(html('[ref][r]\n\n[r]: http://example.com/r')).toBe('<p><a href="http://example.com/r" rel="noopener noreferrer">ref</a></p>\n');
    // A rel of the editor's own is replaced, not added to.
    expect(html('<a href="https://example.com/" rel="opener">x</a>')).toBe('<p><a href="https://example.com/" rel="noopener noreferrer">x</a></p>\n');
  });

  it('relative links and URLs with credentials keep only their text; relative images go', () => {
    expect(html('[a](/en/other) [b](#top) [c](//evil.example/x) [d](https://desk@evil.example/)')).toBe('<p><a>a</a> <a>b</a> <a>c</a> <a>d</a></p>\n');
    expect(html('![alt](/img/a.png) ![x](data:image/png;base64,AAAA)')).toBe('<p> </p>\n');
  });

  it('raw HTML goes through the same allow-list: allowed elements stay, the rest lose their tags', () => {
    expect(html('<p class="x" id="y">a <b>b</b> <span style="color:red">c</span> <u>d</u></p>')).toBe('<p>a <b>b</b> c d</p>');
    expect(html('<div><table><tr><td colspan="2" onclick="x()">t</td></tr></table></div>')).toBe('<table><tr><td>t</td></tr></table>');
  });

  it('renders each Markdown once while it is cached, and returns the same answer', () => {
    const markdown = `## Cached ${Date.now()}\n\nOnce.`;
    const before = bodyCacheStats();
    const first = renderBody(markdown);
    const second = renderBody(markdown);
    const after = bodyCacheStats();
    expect(second).toBe(first);
    expect(after.misses - before.misses).toBe(1);
    expect(after.hits - before.hits).toBe(1);
    expect(after.bytes).toBeLessThanOrEqual(4 * 1024 * 1024);
  });
});

describe('body_text: Markdown and HTML removed, link and image text kept, paragraphs separated by a blank line', () => {
  it('paragraphs, headings, emphasis, links, images', () => {
    expect(
      text('# Fiber lasers\n\nA *bright* [source](https://example.com/) for\nwelding.\n\n![A 10 kW cabinet](https://img.example.com/a.jpg)\n\nLast &amp; least.'),
    ).toBe('Fiber lasers\n\nA bright source for welding.\n\nA 10 kW cabinet\n\nLast & least.');
  });

  it('lists: one item a line, nested and loose lists too, no bullets', () => {
    expect(text('Intro\n\n- one\n- two\n  - two a\n\n1. first\n\n2. second\n\nOutro')).toBe('Intro\n\none\ntwo\ntwo a\n\nfirst\nsecond\n\nOutro');
  });

  it('tables: one row a line, cells separated by a tab', () => {
    expect(text('| Laser | Power |\n|---|---|\n| fiber | 10 kW |\n\nAfter')).toBe('Laser\tPower\nfiber\t10 kW\n\nAfter');
  });

  it('code blocks keep their lines and indentation; code spans their characters', () => {
    expect(text('Before `a<b`\n\n```\nif (a < b) {\n  go();\n}\n```\n\nAfter')).toBe('Before a<b\n\nif (a < b) {\n  go();\n}\n\nAfter');
  });

  it('quotes, rules and line breaks', () => {
    expect(text('> "The spec sheet is the start"\n\n---\n\nline one  \nline two')).toBe('"The spec sheet is the start"\n\nline one\nline two');
  });

  it('raw HTML: tags removed, text kept, script and style content never', () => {
    expect(text('<p>Hello <span>there</span></p>\n\n<script>alert("x")</script><style>p{}</style>\n\nEnd')).toBe('Hello there\n\nEnd');
  });

  it('an empty body is empty', () => {
    expect(renderBody('')).toEqual({ html: '', text: '' });
  });
});
