// Starts the Procfile's processes from a production tree (argv[2]) against the sample CMS of
// that tree's own demo, and checks what an operator checks after a deploy. Exits non-zero
// with one line on the first thing that fails.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const app = process.argv[2];
const { startCmsServer } = await import(join(app, 'dist/src/demo/cms-server.js'));
const { loadSampleStore } = await import(join(app, 'dist/src/demo/sample.js'));
const data = mkdtempSync(join(tmpdir(), 'prod-smoke-'));
const cms = await startCmsServer({ store: loadSampleStore(Date.now()), token: 'smoke-token', basePath: '/export' });
const env = {
  PATH: process.env.PATH,
  NODE_ENV: 'production',
  DATABASE_PATH: join(data, 'syndication.db'),
  KEYS_DATABASE_PATH: join(data, 'keys.db'),
  CMS_BASE_URL: cms.url,
  CMS_TOKEN: 'smoke-token',
  HOST: '127.0.0.1',
  PORT: '0',
};
const fail = (why) => {
  console.error(`production-smoke: ${why}`);
  process.exit(1);
};
const procfile = Object.fromEntries(
  readFileSync(join(app, 'Procfile'), 'utf8')
    .split('\n')
    .filter((l) => l.includes(':'))
    .map((l) => [l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim().split(/\s+/)]),
);
const start = (name) => {
  const [cmd, ...args] = procfile[name] ?? fail(`no "${name}" in the Procfile`);
  return spawn(cmd, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
};
const keys = (...args) => execFileSync('node', ['dist/src/cli/keys.js', ...args], { cwd: app, env, encoding: 'utf8' });

const worker = start('worker');
keys('init');
const { key } = JSON.parse(keys('create', '--partner', 'Smoke Test', '--json'));
const web = start('web');
const port = await new Promise((resolve, reject) => {
  web.on('exit', (code) => reject(new Error(`the API exited (${code})`)));
  createInterface({ input: web.stdout }).on('line', (line) => {
    try {
      const entry = JSON.parse(line);
      if (entry.msg?.startsWith('API listening') && entry.port) resolve(entry.port);
    } catch {}
  });
}).catch((e) => fail(e.message));
const base = `http://127.0.0.1:${port}`;
const deadline = Date.now() + 60_000;
let health;
while (Date.now() < deadline) {
  health = await fetch(`${base}/health`).catch(() => undefined);
  if (health?.status === 200) break;
  await new Promise((r) => setTimeout(r, 250));
}
if (health?.status !== 200) fail(`/health answered ${health?.status} within 60 s`);
const list = await fetch(`${base}/api/v1/articles?locale=en&limit=1`, { headers: { 'X-API-Key': key } });
if (list.status !== 200) fail(`the list answered ${list.status}`);
const slug = (await list.json()).data?.[0]?.slug ?? fail('the list is empty');
const one = await fetch(`${base}/api/v1/articles/${slug}?locale=en`, { headers: { 'X-API-Key': key } });
if (one.status !== 200) fail(`the article answered ${one.status}`);
const body = await one.json();
if (typeof body.data?.body !== 'string' || body.data.body.length === 0) fail('the article has no body');
const exits = await Promise.all(
  [web, worker].map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : (child.on('exit', (c, s) => resolve(c ?? s)), child.kill('SIGTERM'))))),
);
await cms.close();
if (exits.some((c) => c !== 0)) fail(`exit codes after SIGTERM: web ${exits[0]}, worker ${exits[1]}`);
console.log(`production-smoke: ok (Node ${process.versions.node}; /health 200, key created, "${slug}" served, web and worker exited 0)`);
