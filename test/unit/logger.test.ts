import { describe, expect, it } from 'vitest';
import { loadApiConfig } from '../../src/config/api.js';
import { loadWorkerConfig } from '../../src/config/worker.js';
import { memoryLogger } from '../support/api.js';

const KEY = 'lsk_0123456789ABCDEFGHIJabcdefghij';
const SECRET = 'super-secret-value-93f1';

/** Logs through the real createLogger into memory and returns the parsed lines. */
function logged(write: (logger: ReturnType<typeof memoryLogger>['logger']) => void) {
  const { logger, lines } = memoryLogger('trace');
  write(logger);
  logger.flush();
  return { text: lines.join('\n'), records: lines.map((l) => JSON.parse(l) as Record<string, any>) };
}

describe('createLogger redaction', () => {
  it('redacts req.headers["x-api-key"] and req.headers.authorization, keeping the other headers', () => {
    const { text, records } = logged((log) =>
      log.info({ req: { method: 'GET', headers: { 'x-api-key': KEY, authorization: `Bearer ${SECRET}`, accept: 'application/json' } } }, 'request'),
    );
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(SECRET);
    expect(records).toHaveLength(1);
    expect(records[0]!.req.headers['x-api-key']).toBe('[redacted]');
    expect(records[0]!.req.headers.authorization).toBe('[redacted]');
    expect(records[0]!.req.headers.accept).toBe('application/json');
    expect(records[0]!.req.method).toBe('GET');
  });

  it.each(['token', 'cmsToken', 'apiKey'])('redacts %s at the top level of a line', (field) => {
    const { text, records } = logged((log) => log.warn({ [field]: SECRET, attempt: 2 }, 'retrying'));
    expect(text).not.toContain(SECRET);
    expect(records[0]![field]).toBe('[redacted]');
    expect(records[0]!.attempt).toBe(2);
  });

  it.each(['token', 'cmsToken', 'apiKey'])('redacts %s nested inside a logged object', (field) => {
    const { text, records } = logged((log) => log.error({ cms: { [field]: SECRET, url: 'https://cms.example.com' } }, 'failed'));
    expect(text).not.toContain(SECRET);
    expect(records[0]!.cms[field]).toBe('[redacted]');
    expect(records[0]!.cms.url).toBe('https://cms.example.com');
  });

  it.each(['token', 'cmsToken', 'apiKey'])('redacts %s deeper inside a logged object', (field) => {
    const { text } = logged((log) => log.info({ run: { source: { auth: { [field]: SECRET } } } }, 'deep'));
    expect(text).not.toContain(SECRET);
    expect(text).toContain('[redacted]');
  });

  it.each(['token', 'cmsToken', 'apiKey'])('redacts %s in a child logger\'s bindings', (field) => {
    const { text } = logged((log) => log.child({ [field]: SECRET }).info('from a child'));
    expect(text).toContain('from a child');
    expect(text).not.toContain(SECRET);
  });

  it('redacts the key and the authorization of headers logged outside req', () => {
    const { text } = logged((log) =>
      log.info(
        {
          headers: { 'x-api-key': KEY, authorization: SECRET },
          upstream: { headers: { authorization: SECRET } },
          cms: { request: { headers: { Authorization: `Bearer ${SECRET}`, 'X-API-Key': KEY } } },
        },
        'headers',
      ),
    );
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(SECRET);
  });

  it('redacts the CMS token and the Meilisearch key when a whole loaded config is logged', () => {
    const worker = loadWorkerConfig({
      CMS_BASE_URL: 'https://cms.example.com',
      CMS_TOKEN: 'cms-secret-6b2e',
      MEILI_HOST: 'https://search.example.com',
      MEILI_API_KEY: 'meili-secret-0d8a',
    });
    const api = loadApiConfig({ MEILI_HOST: 'https://search.example.com', MEILI_API_KEY: 'meili-secret-0d8a' });
    const { text } = logged((log) => {
      log.info({ config: worker }, 'worker config');
      log.info({ config: api }, 'api config');
      log.info(worker, 'worker config at the top level');
    });
    expect(text).toContain('https://cms.example.com');
    expect(text).not.toContain('cms-secret-6b2e');
    expect(text).not.toContain('meili-secret-0d8a');
  });

  it('still logs errors under err with their message and stack', () => {
    const { records } = logged((log) => log.error({ err: new Error('boom'), token: SECRET }, 'failed'));
    expect(records[0]!.err.message).toBe('boom');
    expect(records[0]!.err.stack).toContain('boom');
    expect(records[0]!.token).toBe('[redacted]');
  });

  it('leaves the logged object itself untouched', () => {
    const payload = { token: SECRET, nested: { deeper: { apiKey: SECRET } } };
    const { text } = logged((log) => log.info(payload, 'x'));
    expect(text).not.toContain(SECRET);
    expect(payload.token).toBe(SECRET);
    expect(payload.nested.deeper.apiKey).toBe(SECRET);
  });
});
