import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dist = (path: string) => fileURLToPath(new URL(`../../dist/${path}`, import.meta.url));

/*
 * The renderer's libraries (markdown-it, sanitize-html and what they bring) load on the first
 * render, not when a process imports src/content/body-render.ts: an API that answers no body
 * field never pays for them. A child process (the built module, as the API loads it) lists the
 * packages loaded before and after its first render, with a load hook that sees both module
 * systems.
 */
const PROBE = `
import { registerHooks } from 'node:module';
const packages = new Set();
registerHooks({
  load(url, context, nextLoad) {
    const match = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url);
    if (match) packages.add(match[1]);
    return nextLoad(url, context);
  },
});
const { renderBody } = await import(process.argv[1]);
const before = [...packages];
const { html } = renderBody('A [link](https://example.com/).');
console.log(JSON.stringify({ before, after: [...packages], html }));
`;

describe('loading the renderer', () => {
  it('loads markdown-it, sanitize-html and htmlparser2 on the first render, not on import', () => {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', PROBE, dist('src/content/body-render.js')], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    const loaded = JSON.parse(run.stdout) as { before: string[]; after: string[]; html: string };
    expect(loaded.before).toEqual([]);
    expect(loaded.after).toEqual(expect.arrayContaining(['markdown-it', 'sanitize-html', 'htmlparser2']));
    expect(loaded.html).toBe('<p>A <a href="https://example.com/" rel="noopener noreferrer">link</a>.</p>\n');
  });
});
