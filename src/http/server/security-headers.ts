import helmet from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * helmet's default security headers as a flat `[name, value, ...]` list, computed once: with
 * the default options they do not depend on the request, and running helmet's chain of
 * thirteen middlewares per request cost a measurable share of a cached answer. Each response
 * gets the same headers, in the same order, as from helmet() itself.
 */
export function securityHeaderList(): readonly string[] {
  const headers: string[] = [];
  const recorder = {
    setHeader(name: string, value: unknown) {
      headers.push(name, String(value));
    },
    removeHeader() {},
    getHeader() {
      return undefined;
    },
  };
  let ran = false;
  helmet()({ headers: {}, method: 'GET', url: '/' } as IncomingMessage, recorder as unknown as ServerResponse, () => {
    ran = true;
  });
  // helmet calls next synchronously; if a future version did not, its headers would be lost.
  if (!ran) throw new Error('helmet did not finish synchronously');
  return Object.freeze(headers);
}
