import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

/*
 * The partner's address as the request log records it, by the rules of Express's
 * `trust proxy` setting (https://expressjs.com/en/guide/behind-proxies.html), which
 * TRUST_PROXY takes: false (default, the socket's peer), true (the left-most X-Forwarded-For
 * entry), a number of hops, or addresses / subnets / `loopback`, `linklocal`, `uniquelocal`
 * separated by commas. The request log calls this for the fast path and Express alike, and
 * Express's own `req.ip` is set to agree (see createApp).
 */

export type TrustProxy = boolean | number | string;
export type ClientAddress = (req: IncomingMessage) => string | undefined;

/** The same compilation Express applies to its `trust proxy` setting. */
export function compileTrust(value: TrustProxy): (address: string, hop: number) => boolean {
  if (value === true) return () => true;
  if (typeof value === 'number') return (_address, hop) => hop < value;
  if (value === false) return () => false;
  return proxyaddr.compile(value.split(',').map((v) => v.trim()).filter(Boolean));
}

export function clientAddressResolver(value: TrustProxy): ClientAddress {
  // Without a trusted proxy the header is never read: no parsing cost per request.
  if (value === false || value === 0) return (req) => req.socket.remoteAddress;
  const trust = compileTrust(value);
  return (req) => (req.socket.remoteAddress === undefined ? undefined : proxyaddr(req, trust));
}
