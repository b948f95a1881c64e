import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, relative } from 'node:path';
import { loadDemoConfig } from '../config/demo.js';
import { createInterface } from 'node:readline';
import { UsageError } from '../errors.js';
import { runMain } from '../lib/main-guard.js';
import { projectRoot } from '../lib/paths.js';
import { startCmsServer, type CmsServerHandle } from './cms-server.js';
import { assertDemoOwns, recreateDemoDatabases } from './demo-files.js';
import { loadSampleStore } from './sample.js';

/*
 * `npm run demo`: the whole service from one command, with nothing to install. A sample CMS
 * on loopback, one sync into a fresh demo snapshot, a partner key, the API and the worker on
 * its schedule, each a real process started exactly as an operator would start it.
 */

const root = projectRoot();
const CMS_TOKEN = 'demo-cms-token';
const children: ChildProcess[] = [];
/** Set by Ctrl-C or SIGTERM, or once startup failed: no child is started after it. */
let stopping = false;

/** A path as a person would type it: relative inside the project, absolute elsewhere. */
const shown = (path: string) => (path.startsWith(`${root}/`) ? relative(root, path) : path);

function node(script: string, args: string[], env: Record<string, string>): ChildProcess {
  // A step still under way when the demo was told to stop must not start another process.
  if (stopping) throw new UsageError('the demo was stopped while starting');
  const child = spawn(process.execPath, [join(root, 'dist', script), ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return child;
}

async function finish(child: ChildProcess, what: string): Promise<string> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d));
  child.stderr?.on('data', (d: Buffer) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new UsageError(`${what} failed: ${stderr.trim().split('\n').at(-1) ?? `exit ${code}`}`);
  return stdout;
}

/** Starts the API and resolves with its port once it logs that it listens. */
async function startApi(env: Record<string, string>, logPath: string): Promise<number> {
  const api = node('src/server.js', [], env);
  const log = createWriteStream(logPath, { flags: 'a' });
  // Its last stderr line says why it stopped (e.g. the port is taken): worth the one line shown.
  let lastError = '';
  api.stderr?.on('data', (d: Buffer) => (lastError = d.toString().trim().split('\n').at(-1) || lastError));
  api.stderr?.pipe(log);
  const lines = createInterface({ input: api.stdout! });
  return new Promise((resolve, reject) => {
    api.on('exit', (code) =>
      reject(new UsageError(`the API stopped (exit ${code})${lastError ? `: ${lastError}` : ''}; see ${shown(logPath)}`)),
    );
    lines.on('line', (line) => {
      log.write(`${line}\n`);
      try {
        const entry = JSON.parse(line) as { port?: number; msg?: string };
        if (entry.msg?.startsWith('API listening') && entry.port) resolve(entry.port);
      } catch {
        // Not a log line; kept in the log file all the same.
      }
    });
  });
}

/**
 * Refuses a taken port before the demo replaces its databases. The API still reports the
 * port itself if another process takes it during the first sync.
 */
async function assertPortFree(port: number): Promise<void> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new UsageError(
          error.code === 'EADDRINUSE'
            ? `the demo cannot start: port ${port} is already in use (set PORT to a free port)`
            : `the demo cannot listen on port ${port} (${error.code}): set PORT to a free port`,
        ),
      ),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

// A child killed by a signal keeps exitCode null, so both codes are checked: waiting for the
// exit of a child that already exited would never end.
const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

function stopAll(): void {
  for (const child of children) if (running(child)) child.kill('SIGTERM');
}

runMain(async () => {
  const { port, databasePath, keysDatabasePath, ignoredVariables } = loadDemoConfig(process.env);
  if (ignoredVariables.length > 0) {
    const own = `${shown(databasePath)} and ${shown(keysDatabasePath)}`;
    process.stdout.write(`Ignoring ${ignoredVariables.join(' and ')}: the demo uses only its own ${own}\n`);
  }
  // Installed before any child starts, so a Ctrl-C during the first sync stops it too (the
  // step under way then fails, and the cleanup below runs as after any failed start).
  const stopRequested = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  void stopRequested.then(() => {
    stopping = true;
    stopAll();
  });
  let cms: CmsServerHandle | undefined;
  try {
    await startDemo(port, databasePath, keysDatabasePath, (handle) => (cms = handle));
    await stopRequested;
    process.stdout.write('Stopping the demo...\n');
  } catch (error) {
    if (!stopping) throw error; // a failed start: runMain prints its one line and exits 1
    process.stdout.write('Stopping the demo...\n');
  } finally {
    // Whatever was started so far, or the process would stay up on the CMS server after a
    // failed start, with nothing left to stop it.
    stopping = true;
    stopAll();
    await Promise.all(children.map((c) => (running(c) ? new Promise((r) => c.on('exit', r)) : undefined)));
    await cms?.close();
  }
});

async function startDemo(
  port: number,
  databasePath: string,
  keysDatabasePath: string,
  onCms: (cms: CmsServerHandle) => void,
): Promise<void> {
  // Everything that can refuse the start comes before the first file is deleted.
  const own = [databasePath, keysDatabasePath];
  assertDemoOwns(own, shown);
  if (port !== 0) await assertPortFree(port);
  const dataDir = dirname(databasePath);
  mkdirSync(dataDir, { recursive: true });
  recreateDemoDatabases(own);

  const cms = await startCmsServer({ store: loadSampleStore(Date.now()), token: CMS_TOKEN, basePath: '/export' });
  onCms(cms);
  const env = { DATABASE_PATH: databasePath, KEYS_DATABASE_PATH: keysDatabasePath, CMS_BASE_URL: cms.url, CMS_TOKEN, LOG_LEVEL: 'info' };
  process.stdout.write(`Sample CMS on ${cms.url}\nSyncing it into ${shown(databasePath)} ...\n`);
  await finish(node('sync/main.js', ['--once'], env), 'the first sync');

  const created = JSON.parse(
    await finish(node('src/cli/keys.js', ['create', '--partner', 'Demo Partner', '--create', '--json'], env), 'creating the demo key'),
  ) as { key: string };

  const apiLog = join(dataDir, 'demo-api.log');
  // No balancer in front of the demo: a stop should not wait for one (SHUTDOWN_DELAY_MS).
  const apiPort = await startApi({ ...env, PORT: String(port), HOST: '127.0.0.1', SHUTDOWN_DELAY_MS: '0' }, apiLog);
  const workerLog = join(dataDir, 'demo-worker.log');
  const worker = node('sync/main.js', [], { ...env, SYNC_CRON: '* * * * *', SYNC_FULL_CRON: '*/10 * * * *' });
  const workerOut = createWriteStream(workerLog, { flags: 'a' });
  worker.stdout?.pipe(workerOut);
  worker.stderr?.pipe(workerOut);

  const base = `http://127.0.0.1:${apiPort}`;
  const key = created.key;
  process.stdout.write(
    [
      '',
      'The demo is running:',
      `  API          ${base}   (log: ${shown(apiLog)})`,
      `  sync worker  every minute   (log: ${shown(workerLog)})`,
      `  snapshot     ${shown(databasePath)}`,
      `  keys         ${shown(keysDatabasePath)}`,
      '',
      'Try it:',
      `  curl -H 'X-API-Key: ${key}' '${base}/api/v1/articles?locale=en&limit=2'`,
      `  curl -H 'X-API-Key: ${key}' '${base}/api/v1/categories?locale=zh'`,
      `  curl -H 'X-API-Key: ${key}' '${base}/api/v1/search?locale=zh&q=%E6%BF%80%E5%85%89'   # q=激光`,
      `  curl '${base}/health'`,
      `API reference in a browser: ${base}/docs`,
      '',
      'A scheduled article in each locale appears by itself within a few minutes.',
      `Manage keys: KEYS_DATABASE_PATH=${shown(keysDatabasePath)} npm run keys -- list`,
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
}

process.on('exit', stopAll);
