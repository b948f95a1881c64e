import { Agent, request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { addKey, keysPathFor, startApi, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { runCli } from '../../support/run-node.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';

/*
 * The keys database is looked at once per turn of the event loop (src/db/keys/keys-store.ts,
 * decision 0077), not once per request. This checks what that must not change: with requests
 * arriving without a pause on several keep-alive connections, every request sent after the
 * editors' CLI has revoked the key (the process exited, its commit done) is refused, and the
 * cached page answered by the fast path is refused like any other.
 */

const dir = tempDir('revocation-under-load-');
let api: TestApi | undefined;
afterAll(async () => {
  await api?.close();
  dir.cleanup();
});

interface Sent {
  sentAt: number;
  status: number;
}

describe('revocation while a partner is sending without a pause', () => {
  it('refuses every request sent after the CLI revoked the key, on every connection', async () => {
    const databasePath = dir.path('snapshot.db');
    buildSnapshot(databasePath, {
      sections: [rawSection({ slug: 'fiber' })],
      articles: [rawArticle({ slug: 'a-story', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' })],
    });
    const { id, key } = addKey(databasePath, 'Busy Partner');
    api = await startApi({ databasePath, logLevel: 'warn' });
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const url = `${api.url}/api/v1/articles?page=1&limit=20`;
    const sent: Sent[] = [];
    let sending = true;
    const once = () =>
      new Promise<void>((resolve, reject) => {
        const sentAt = performance.now();
        const req = request(url, { agent, headers: { 'X-API-Key': key } }, (res) => {
          res.resume();
          res.once('end', () => {
            sent.push({ sentAt, status: res.statusCode ?? 0 });
            resolve();
          });
        });
        req.once('error', reject);
        req.end();
      });
    // Eight connections, each sending its next request as soon as its answer arrives.
    const loops = Array.from({ length: 8 }, async () => {
      while (sending) await once();
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const revoked = await runCli(['revoke', String(id)], keysPathFor(databasePath));
      expect(revoked.code).toBe(0);
      const revokedAt = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 300));
      sending = false;
      await Promise.all(loops);
      const before = sent.filter((s) => s.sentAt < revokedAt);
      const after = sent.filter((s) => s.sentAt >= revokedAt);
      // The page was answered (and cached) before, so the fast path was answering it.
      expect(before.filter((s) => s.status === 200).length).toBeGreaterThan(50);
      expect(after.length).toBeGreaterThan(50);
      expect(after.filter((s) => s.status !== 401)).toEqual([]);
    } finally {
      sending = false;
      agent.destroy();
    }
  });
});
