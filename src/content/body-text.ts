/**
 * `body_text` (docs/specs/api-contract.md): the body as plain text, read from the sanitized `body_html`,
 * so that nothing the sanitizer removed (a script's source, a style sheet) can reach the text
 * either. Markup goes, text stays: a link's text, an image's alt text. Blocks (paragraphs,
 * headings, quotes, code blocks, lists, tables) are separated by a blank line; a list's items,
 * a table's rows and a `<br>` each start a line; a table's cells are separated by a tab. Code
 * blocks keep their lines and spaces; elsewhere runs of white space become one space.
 */
import type { parseDocument } from 'htmlparser2';

type DomNode = ReturnType<typeof parseDocument>['children'][number];

const BLOCKS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'ul', 'ol', 'table', 'hr']);
const LINES = new Set(['li', 'tr']);

const PARAGRAPH = 2;
const LINE = 1;

class TextWriter {
  private out = '';
  /** The break owed before the next text: none, a line, or a blank line. */
  private owed = 0;

  text(value: string, verbatim: boolean): void {
    let chunk = verbatim ? value : value.replace(/\s+/g, ' ');
    const atLineStart = this.out === '' || this.owed > 0 || this.out.endsWith('\n');
    if (atLineStart && !verbatim) chunk = chunk.replace(/^ /, '');
    if (chunk === '') return;
    if (this.owed > 0 && this.out !== '') this.out = this.out.replace(/\s+$/, '') + (this.owed === PARAGRAPH ? '\n\n' : '\n');
    this.owed = 0;
    this.out += chunk;
  }

  cellGap(): void {
    if (this.owed === 0 && this.out !== '' && !this.out.endsWith('\n')) this.out = this.out.replace(/ +$/, '') + '\t';
  }

  owe(kind: number): void {
    this.owed = Math.max(this.owed, kind);
  }

  toString(): string {
    return this.out.replace(/[ \t]+$/gm, '').trim();
  }
}

/** `inItem`: inside a list item, blocks (a loose list's paragraphs, a nested list) only start a line. */
function walk(nodes: readonly DomNode[], writer: TextWriter, verbatim: boolean, inItem: boolean): void {
  for (const node of nodes) {
    if (node.type === 'text') {
      writer.text(node.data, verbatim);
      continue;
    }
    if (node.type !== 'tag') continue;
    const name = node.name;
    if (name === 'br') {
      writer.owe(LINE);
      continue;
    }
    if (name === 'img') {
      writer.text(node.attribs.alt ?? '', false);
      continue;
    }
    if (name === 'td' || name === 'th') writer.cellGap();
    const kind = BLOCKS.has(name) ? (inItem ? LINE : PARAGRAPH) : LINES.has(name) ? LINE : 0;
    const childInItem = inItem || name === 'li';
    if (kind) writer.owe(kind);
    // A code block keeps its text as written; the newline before its closing fence gives way to the break after it.
    walk(node.children, writer, verbatim || name === 'pre', childInItem);
    if (kind) writer.owe(kind);
  }
}

/** The plain text of sanitized HTML, parsed with htmlparser2 (entities decoded). */
export function htmlToText(parse: typeof parseDocument, html: string): string {
  const writer = new TextWriter();
  walk(parse(html).children, writer, false, false);
  return writer.toString();
}
