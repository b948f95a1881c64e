import { describe, expect, it } from 'vitest';
import { requestLineWriter, type RequestLine } from '../../../../src/http/pipeline/request-log.js';
import { memoryLogger } from '../../../support/api.js';

/*
 * The request line is written by hand for speed (src/http/pipeline/request-log.ts): it must be the
 * line pino itself writes for the same fields, byte for byte apart from the time.
 */

const full: RequestLine = {
  req: { id: 'req-1', method: 'GET', url: '/api/v1/articles?q="laser"&x=\u00e9\u6fc0\u5149\\', client: '203.0.113.7' },
  res: { status: 404 },
  responseTime: 12,
  keyId: 3,
  errorCode: 'article_not_found',
  reason: 'a "quoted"\nreason',
};

const sparse: RequestLine = {
  req: { id: 'req-2', method: undefined, url: '/health', client: undefined },
  res: { status: 200 },
  responseTime: 0,
  keyId: undefined,
  errorCode: undefined,
  reason: undefined,
};

function withoutTime(line: string): string {
  return line.replace(/"time":"[^"]*"/, '"time":"-"');
}

describe('the hand-written request line', () => {
  it.each([
    ['every field set, with characters JSON must escape', full, 'request completed'],
    ['undefined fields left out, as pino leaves them out', sparse, 'request aborted'],
  ])('is what logger.info writes: %s', (_name, line, msg) => {
    const { logger, lines } = memoryLogger('info');
    const child = logger.child({}, { redact: { paths: [] }, formatters: { log: (l: object) => l } });
    child.info(line, msg);
    requestLineWriter(child)(line, msg);
    logger.flush();
    expect(lines).toHaveLength(2);
    expect(withoutTime(lines[1]!)).toBe(withoutTime(lines[0]!));
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: 30, msg, req: { id: line.req.id, url: line.req.url } });
  });

  it('writes nothing when the level is above info', () => {
    const { logger, lines } = memoryLogger('warn');
    requestLineWriter(logger)(full, 'request completed');
    logger.flush();
    expect(lines).toHaveLength(0);
  });
});
