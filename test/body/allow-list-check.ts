import { parseDocument } from 'htmlparser2';

/*
 * The contract's allow-list for body_html (docs/specs/api-contract.md, "Choosing fields and body formats"),
 * written out here independently of src/content/body-allow-list.ts, so that a change there
 * that lets more through fails these tests. Used on our output as a string (htmlparser2) and,
 * in hostile-corpus.test.ts, on the DOM Chromium builds from it.
 */

export const CONTRACT_ELEMENTS = [
  'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'a', 'img', 'em', 'strong', 'b', 'i', 'del', 's',
  'code', 'pre', 'blockquote', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'hr', 'br',
];

export const CONTRACT_ATTRIBUTES: Record<string, string[]> = {
  a: ['href', 'title', 'rel'],
  img: ['src', 'alt', 'title'],
  ol: ['start'],
  th: ['align'],
  td: ['align'],
  code: ['class'],
};

/** What is wrong with one element of the output, judged from its name and attributes; [] when nothing. */
export function elementProblems(name: string, attributes: Record<string, string>): string[] {
  const problems: string[] = [];
  if (!CONTRACT_ELEMENTS.includes(name)) problems.push(`element <${name}>`);
  const allowed = CONTRACT_ATTRIBUTES[name] ?? [];
  for (const [attribute, value] of Object.entries(attributes)) {
    if (!allowed.includes(attribute)) problems.push(`attribute ${attribute} on <${name}>`);
    if (attribute === 'href' || attribute === 'src') {
      let protocol = 'relative';
      try {
        protocol = new URL(value).protocol;
      } catch {
        // relative: not allowed either
      }
      const schemes = name === 'a' && attribute === 'href' ? ['http:', 'https:', 'mailto:'] : ['http:', 'https:'];
      if (!schemes.includes(protocol)) problems.push(`${attribute}="${value}" on <${name}>`);
    }
    if (attribute === 'class' && !/^language-[\w+#.-]*$/.test(value)) problems.push(`class="${value}" on <${name}>`);
  }
  if (name === 'a' && attributes.href !== undefined && attributes.rel !== 'noopener noreferrer') problems.push(`link without rel="noopener noreferrer"`);
  return problems;
}

/** Every problem in an HTML string: elements, attributes and URLs outside the allow-list, comments, CDATA, processing instructions. */
export function htmlProblems(html: string): string[] {
  const problems: string[] = [];
  const visit = (nodes: ReturnType<typeof parseDocument>['children']): void => {
    for (const node of nodes) {
      if (node.type === 'tag' || node.type === 'script' || node.type === 'style') {
        problems.push(...elementProblems(node.name, node.attribs));
        visit(node.children);
      } else if (node.type !== 'text') {
        problems.push(`${node.type} node`);
      }
    }
  };
  visit(parseDocument(html, { recognizeCDATA: true, recognizeSelfClosing: false }).children);
  return problems;
}
