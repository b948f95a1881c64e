import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TurnEnds } from '../../../src/http/fast/turn-ends.js';
import { addKey, startApi, testClock } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';

/*
 * The fast path's answers leave together at the end of the turn (src/http/fast/turn-ends.ts): on
 * a real node:http server, a response handed to end() is ended when the turn ends, in the
 * order answered, or at once by flush(); a client gone meanwhile costs nothing.
 */

let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('TurnEnds', () => {
  it('ends a response when its turn ends, not when end() is called, and the client gets the whole body', async () => {
    const ends = new TurnEnds();
    const seen: boolean[] = [];
    const port = await listen((_req, res) => {
      res.writeHead(200, ['Content-Type', 'text/plain', 'Content-Length', '5']);
      ends.end(res, Buffer.from('hello'));
      seen.push(res.writableEnded);
      // Queued after the turn's flush: runs once it has ended the response.
      setImmediate(() => seen.push(res.writableEnded));
    });
    expect(await get(port, '/')).toEqual({ status: 200, body: 'hello' });
    expect(seen).toEqual([false, true]);
  });

  it('ends the responses of one turn in the order they were answered', async () => {
    const ends = new TurnEnds();
    const order: string[] = [];
    const held: ServerResponse[] = [];
    const port = await listen((_req, res) => {
      held.push(res);
      if (held.length < 3) return;
      // Three requests answered in one turn, in arrival order.
      for (const r of held) {
        const body = Buffer.from(r.req.url!);
        r.writeHead(200, ['Content-Length', String(body.length)]);
        r.on('finish', () => order.push(r.req.url!));
        ends.end(r, body);
      }
    });
    const answers = await Promise.all(['/a', '/b', '/c'].map((path) => get(port, path)));
    expect(answers.map((a) => a.body)).toEqual(['/a', '/b', '/c']);
    expect(order).toEqual(held.map((r) => r.req.url));
  });

  it('flush() ends every pending response at once (before slower work in the same turn)', async () => {
    const ends = new TurnEnds();
    let endedBeforeSlowWork: boolean | undefined;
    const port = await listen((_req, res) => {
      res.writeHead(204);
      ends.end(res);
      ends.flush();
      endedBeforeSlowWork = res.writableEnded;
    });
    expect((await get(port, '/')).status).toBe(204);
    expect(endedBeforeSlowWork).toBe(true);
  });

  it('a response that cannot be ended is cut, and the other answers of its turn still leave', async () => {
    const ends = new TurnEnds();
    const held: ServerResponse[] = [];
    const port = await listen((_req, res) => {
      held.push(res);
      if (held.length < 2) return;
      const [broken, fine] = held as [ServerResponse, ServerResponse];
      broken.end = () => {
        throw new Error('cannot end');
      };
      for (const r of [broken, fine]) {
        r.writeHead(200, ['Content-Length', '2']);
        ends.end(r, Buffer.from('ok'));
      }
    });
    const outcomes = await Promise.allSettled([get(port, '/'), get(port, '/')]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(outcomes.find((o) => o.status === 'fulfilled')).toMatchObject({ value: { status: 200, body: 'ok' } });
  });

  it('a response whose client left before the turn ended is dropped without an error', async () => {
    const ends = new TurnEnds();
    const closed = new Promise<boolean>((resolve, reject) => {
      void listen((req, res) => {
        res.writeHead(200, ['Content-Length', '2']);
        ends.end(res, Buffer.from('ok'));
        res.on('error', reject);
        res.on('close', () => resolve(res.writableFinished));
        req.socket.destroy();
      }).then((port) => request({ host: '127.0.0.1', port, path: '/', agent: false }).on('error', () => undefined).end());
    });
    expect(await closed).toBe(false);
  });
});

const NOW = '2026-11-01T12:00:00Z';
const CACHED = '/api/v1/articles?limit=1';

/** The real API over two English articles and a Chinese one, with CACHED cached (English). */
async function cachedApi() {
  const dir = tempDir();
  const dbPath = dir.path('snapshot.db');
  const published_at = '2026-11-01T11:00:00Z';
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
    articles: [
      ...['one', 'two'].map((slug) => rawArticle({ slug, section_slug: 'fiber', published_at })),
      rawArticle({ locale: 'zh', section_slug: 'fiber', published_at }),
    ],
  });
  const { key } = addKey(dbPath);
  // debug: the API logs each view it builds. The fast path is what holds answers: on, whatever FAST_PATH says.
  const api = await startApi({ databasePath: dbPath, clock: testClock(NOW), logLevel: 'debug', fastPath: true });
  const headers = { 'X-API-Key': key };
  // Twice: an answer is kept on its second request (src/lib/doorkeeper.ts).
  for (let i = 0; i < 2; i++) expect((await api.request.get(CACHED).set(headers)).status).toBe(200);
  return {
    api,
    key,
    headers,
    async close() {
      await api.close();
      dir.cleanup();
    },
  };
}

/** A server that holds requests until two have arrived, then gives both to `answer` in one turn. */
function listenForTwo(answer: (first: [IncomingMessage, ServerResponse], second: [IncomingMessage, ServerResponse]) => void) {
  const held: [IncomingMessage, ServerResponse][] = [];
  return listen((req, res) => {
    held.push([req, res]);
    if (held.length < 2) return;
    // The cached page first, whichever arrived first.
    const first = held.find(([r]) => r.url === CACHED)!;
    answer(first, held.find((pair) => pair !== first)!);
  });
}

describe('the API with answers ending at the end of the turn', () => {
  it('ends the pending answers of the fast path before a request of the same turn goes on to Express', async () => {
    const { api, headers, close } = await cachedApi();
    try {
      // The cached page, then a page not cached yet, which only Express answers.
      let cachedEndedBeforeExpress: boolean | undefined;
      const port = await listenForTwo((cached, uncached) => {
        api.app(...cached);
        const endedByFastPath = cached[1].writableEnded;
        api.app(...uncached);
        cachedEndedBeforeExpress = !endedByFastPath && cached[1].writableEnded;
      });
      const [cached, uncached] = await Promise.all([get(port, CACHED, headers), get(port, '/api/v1/articles?limit=2', headers)]);
      expect([cached.status, uncached.status]).toEqual([200, 200]);
      expect((JSON.parse(uncached.body) as { data: unknown[] }).data).toHaveLength(2);
      expect(cachedEndedBeforeExpress).toBe(true);
    } finally {
      await close();
    }
  });

  it('ends the pending answers of the fast path before a view of the same turn is rebuilt', async () => {
    const { api, headers, close } = await cachedApi();
    try {
      const zhBuilt = () => api.logs.some((line) => line.includes('built the view of zh'));
      expect(zhBuilt()).toBe(false);
      // The cached English page, then the first Chinese request, which builds the Chinese
      // view before anything else. The English answer must not wait for it.
      let zhBuiltWhenEnglishEnded: boolean | undefined;
      const port = await listenForTwo((english, chinese) => {
        const end = english[1].end.bind(english[1]);
        english[1].end = ((...args: Parameters<ServerResponse['end']>) => {
          zhBuiltWhenEnglishEnded = zhBuilt();
          return end(...args);
        }) as ServerResponse['end'];
        api.app(...english);
        api.app(...chinese);
      });
      const answers = await Promise.all([get(port, CACHED, headers), get(port, '/api/v1/articles?locale=zh&limit=1', headers)]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect(zhBuilt()).toBe(true);
      expect(zhBuiltWhenEnglishEnded).toBe(false);
    } finally {
      await close();
    }
  });

  it('writes the pending answers of the turn before Node refuses a request that follows them on the socket, or hands it to CONNECT', async () => {
    const { api, key, close } = await cachedApi();
    try {
      const cached = `GET ${CACHED} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n\r\n`;
      // One packet: the cached page (answered by the fast path), then what Node itself answers.
      const send = (payload: string) =>
        new Promise<string[]>((resolve) => {
          const socket = connect(Number(new URL(api.url).port), '127.0.0.1');
          let text = '';
          socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
          socket.on('error', () => undefined);
          socket.on('close', () => resolve([...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]!)));
          socket.write(payload);
        });
      expect(await send(`${cached}GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n`)).toEqual(['200']);
      expect(await send(`${cached}GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)).toEqual(['200']);
      expect(await send(`${cached}CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`)).toEqual(['200', '405']);
    } finally {
      await close();
    }
  });
});
