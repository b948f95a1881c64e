import helmet from 'helmet';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { setHeaders } from '../../../../src/http/pipeline/response-head.js';
import { securityHeaderList } from '../../../../src/http/server/security-headers.js';

/** The headers of one GET to a server whose only handler is `handle`. */
async function headersFrom(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<[string, string][]> {
  const server = createServer((req, res) => {
    handle(req, res);
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/articles?x=1`);
    await res.arrayBuffer();
    return [...res.headers].filter(([name]) => !['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(name));
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('securityHeaderList', () => {
  it('sends exactly what helmet() sends, computed once, whether set one by one or written in one head', async () => {
    const list = securityHeaderList();
    const fromHelmet = await headersFrom((req, res) => helmet()(req, res, () => {}));
    const setOneByOne = await headersFrom((_req, res) => setHeaders(res, list));
    const inOneHead = await headersFrom((_req, res) => res.writeHead(200, [...list]));
    expect(fromHelmet.length).toBeGreaterThan(8);
    expect(setOneByOne).toEqual(fromHelmet);
    expect(inOneHead).toEqual(fromHelmet);
  });
});
