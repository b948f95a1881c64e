import { describe, expect, it } from 'vitest';
import { publicReason } from '../../../../src/http/routes/service-state.js';

/*
 * /health (no key) shows a failed sync's reason without addresses, paths or host names. Part of
 * that text comes from the CMS; the patterns are written to cost linear time (the benchmark-free
 * suite checks what they hide, not how fast).
 */

describe('publicReason', () => {
  it('hides addresses, paths, IP addresses and host names, and keeps the rest', () => {
    expect(publicReason('GET https://cms.example.com/export/articles?page=2 failed: HTTP 503')).toBe('GET <address> failed: HTTP 503');
    expect(publicReason('cannot open /var/lib/syndication/snapshot.db: disk full')).toBe('cannot open <path> disk full');
    expect(publicReason('connect ECONNREFUSED 10.0.0.12:443')).toBe('connect ECONNREFUSED <host>:443');
    expect(publicReason('getaddrinfo ENOTFOUND cms.internal.example')).toBe('getaddrinfo ENOTFOUND <host>');
    expect(publicReason('took 1.5 s, version 2.0.1')).toBe('took 1.5 s, version 2.0.1');
  });

  it("keeps an HTTP status but not the other side's text after it (its status line and message)", () => {
    expect(
      publicReason('CMS error response: GET /articles?locale=en&page=3 HTTP 503 Service Unavailable: upstream db.internal:5432 refused (5 attempts)'),
    ).toBe('CMS error response: GET <path> HTTP 503 (5 attempts)');
    expect(publicReason('CMS error response: GET /sections?locale=zh HTTP 401 Unauthorized: bad token')).toBe('CMS error response: GET <path> HTTP 401');
  });

  it('keeps hostile text that is no address as it is (it is cut to 200 characters)', () => {
    const hostile = `status ${'a-'.repeat(1_000)}`;
    expect(publicReason(hostile)).toBe(hostile.slice(0, 200));
    expect(publicReason('status .cms.example.com. down')).toBe('status .<host>. down');
  });
});
