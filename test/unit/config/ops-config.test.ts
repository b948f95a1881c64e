import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fastPathEnabled, loadApiConfig } from '../../../src/config/api.js';
import { loadWorkerConfig } from '../../../src/config/worker.js';
import { ConfigError } from '../../../src/errors.js';
import { REPO_ROOT } from '../../support/worker.js';

/* Metrics, health, process and proxy settings; and .env.example kept in step with the config. */

describe('operations settings', () => {
  it('defaults to no metrics endpoint, a 30-minute maximum snapshot age, one process, a 10 s drain and no trusted proxy', () => {
    const config = loadApiConfig({});
    expect(config.metrics).toBeUndefined();
    expect(config.snapshotMaxAgeSeconds).toBe(1_800);
    expect(config.processes).toBe(1);
    expect(config.shutdownTimeoutMs).toBe(10_000);
    expect(config.trustProxy).toBe(false);
    expect(loadWorkerConfig({}).metrics).toBeUndefined();
  });

  it('serves metrics on loopback unless METRICS_HOST says otherwise', () => {
    expect(loadApiConfig({ METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464, host: '127.0.0.1' });
    expect(loadApiConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.2' }).metrics).toEqual({ port: 9464, host: '10.0.0.2' });
    expect(loadWorkerConfig({ WORKER_METRICS_PORT: '9465' }).metrics).toEqual({ port: 9465, host: '127.0.0.1' });
  });

  it('reads SNAPSHOT_MAX_AGE as seconds or with a unit', () => {
    const age = (v: string) => loadApiConfig({ SNAPSHOT_MAX_AGE: v }).snapshotMaxAgeSeconds;
    expect([age('900'), age('90s'), age('45m'), age('2h'), age('1d')]).toEqual([900, 90, 2_700, 7_200, 86_400]);
  });

  it('answers from the fast path unless FAST_PATH=off', () => {
    expect([loadApiConfig({}).fastPath, loadApiConfig({ FAST_PATH: '' }).fastPath]).toEqual([true, true]);
    expect([loadApiConfig({ FAST_PATH: 'on' }).fastPath, loadApiConfig({ FAST_PATH: 'off' }).fastPath]).toEqual([true, false]);
    expect([fastPathEnabled({}), fastPathEnabled({ FAST_PATH: 'off' })]).toEqual([true, false]);
  });

  it('reads TRUST_PROXY in the forms of Express’s trust proxy setting', () => {
    const trust = (v: string) => loadApiConfig({ TRUST_PROXY: v }).trustProxy;
    expect([trust('true'), trust('false'), trust('1'), trust('loopback, 10.0.0.0/8')]).toEqual([true, false, 1, 'loopback, 10.0.0.0/8']);
  });

  it.each([
    ['SNAPSHOT_MAX_AGE', '2 hours'],
    ['SNAPSHOT_MAX_AGE', '0'],
    ['WEB_CONCURRENCY', '0'],
    ['METRICS_PORT', 'metrics'],
    ['TRUST_PROXY', 'my-proxy'],
    ['FAST_PATH', 'false'],
  ])('refuses %s=%s with a message naming it', (name, value) => {
    expect(() => loadApiConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadApiConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name} `));
  });
});

describe('.env.example', () => {
  const example = readFileSync(`${REPO_ROOT}.env.example`, 'utf8');
  const reference = readFileSync(`${REPO_ROOT}docs/configuration.md`, 'utf8');
  const configDir = `${REPO_ROOT}src/config/`;
  const config = readdirSync(configDir)
    .filter((file) => file.endsWith('.ts'))
    .map((file) => readFileSync(`${configDir}${file}`, 'utf8'))
    .join('\n');
  // Every NAME: in a zod schema of src/config/ is an environment variable.
  const variables = [...new Set([...config.matchAll(/^\s+([A-Z][A-Z0-9_]+): optional\(/gm)].map((m) => m[1]!))];

  it('lists every variable src/config/ reads, and each has a row in the configuration reference', () => {
    expect(variables.length).toBeGreaterThan(20);
    for (const name of variables) {
      expect(example, name).toMatch(new RegExp(`^#? ?${name}=`, 'm'));
      expect(reference, name).toContain(`| \`${name}\` |`);
    }
  });

  it('is ignored as .env but committed as .env.example', () => {
    const ignored = readFileSync(`${REPO_ROOT}.gitignore`, 'utf8').split('\n');
    expect(ignored).toContain('.env');
    expect(ignored).not.toContain('.env.example');
  });
});
