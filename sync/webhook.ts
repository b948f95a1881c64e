import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../src/logger.js';
import type { Clock } from '../src/lib/time.js';

/*
 * The CMS's webhook: `POST /hooks/cms`, signed, triggers an incremental sync at once. The
 * signature is HMAC-SHA256 under WEBHOOK_SECRET of `<timestamp>.<raw body>`, sent as
 * `X-Webhook-Signature: sha256=<hex>` with `X-Webhook-Timestamp: <Unix seconds>`: signing the
 * timestamp with the body is what lets an old request be refused as a replay.
 */

export const WEBHOOK_PATH = '/hooks/cms';
export const SIGNATURE_HEADER = 'x-webhook-signature';
export const TIMESTAMP_HEADER = 'x-webhook-timestamp';

export interface WebhookOptions {
  secret: string;
  toleranceSeconds: number;
  maxBodyBytes: number;
  clock: Clock;
  logger: Logger;
  /** Called for a valid request: starts (or queues) an incremental sync; says which. */
  trigger(): 'started' | 'queued';
  /**
   * Called after a valid (signed) request has been answered. Not for refusals: anyone who can
   * reach the port could otherwise make the worker write to its database (and wait for its
   * lock) at will. A throw is logged, never left as an unhandled rejection that ends the worker.
   */
  received(record: WebhookRecord): void;
}

export interface WebhookRecord {
  receivedAt: number;
  status: number;
  outcome: string;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Signs a body as the CMS must: the value of X-Webhook-Signature. */
export function signWebhook(secret: string, timestamp: number | string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

export function createWebhookServer(options: WebhookOptions): Server {
  // Signatures accepted within the tolerance window: the same request twice is a replay.
  const seen = new Map<string, number>();

  async function handle(req: IncomingMessage): Promise<{ status: number; body: object }> {
    const path = (req.url ?? '').split('?')[0];
    if (path !== WEBHOOK_PATH) throw new Refusal(404, 'not_found', `Unknown path; the CMS webhook is POST ${WEBHOOK_PATH}.`);
    if (req.method !== 'POST') {
      throw new Refusal(405, 'method_not_allowed', `Use POST for ${WEBHOOK_PATH}.`, { Allow: 'POST' });
    }
    const body = await readBody(req, options.maxBodyBytes);
    const now = options.clock();
    const timestamp = String(req.headers[TIMESTAMP_HEADER] ?? '');
    const signature = String(req.headers[SIGNATURE_HEADER] ?? '');
    if (!/^\d{1,12}$/.test(timestamp) || signature === '') {
      throw new Refusal(401, 'missing_signature', `Send ${TIMESTAMP_HEADER} (Unix seconds) and ${SIGNATURE_HEADER} (sha256=<hex HMAC of "<timestamp>.<body>">).`);
    }
    if (!matches(signature, signWebhook(options.secret, timestamp, body))) {
      throw new Refusal(401, 'invalid_signature', 'The signature does not match the body and timestamp under the shared secret.');
    }
    if (Math.abs(now / 1000 - Number(timestamp)) > options.toleranceSeconds) {
      throw new Refusal(401, 'stale_timestamp', `The timestamp is more than ${options.toleranceSeconds} s from our clock; sign each request when sending it.`);
    }
    for (const [key, at] of seen) if (now - at > options.toleranceSeconds * 2000) seen.delete(key);
    if (seen.has(signature)) throw new Refusal(409, 'replayed', 'This exact request was already received.');
    seen.set(signature, now);
    return { status: 202, body: { status: 'accepted', sync: options.trigger() } };
  }

  return createServer((req, res) => {
    const receivedAt = options.clock();
    handle(req).then(
      ({ status, body }) => {
        send(res, status, body);
        try {
          options.received({ receivedAt, status, outcome: `accepted, sync ${(body as { sync: string }).sync}` });
        } catch (error) {
          // A locked or failing database: the call was answered and its run requested; only
          // --status misses it. The worker goes on.
          options.logger.warn({ err: error }, 'could not record the last CMS webhook for --status');
        }
      },
      (error: unknown) => {
        const refusal = error instanceof Refusal ? error : new Refusal(400, 'invalid_request', 'The request could not be read.');
        for (const [name, value] of Object.entries(refusal.headers)) res.setHeader(name, value);
        send(res, refusal.status, { error: { code: refusal.code, message: refusal.message } });
        if (refusal.status !== 404) {
          options.logger.warn({ status: refusal.status, code: refusal.code }, `CMS webhook refused: ${refusal.code}`);
        }
        // An oversized body is not read to its end: close the connection after the answer.
        if (refusal.status === 413) res.once('finish', () => req.destroy());
      },
    );
  });
}

function matches(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) return Promise.reject(tooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.pause();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const tooLarge = (maxBytes: number) => new Refusal(413, 'payload_too_large', `The body is larger than ${maxBytes} bytes.`);

function send(res: ServerResponse, status: number, body: object): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
    'Cache-Control': 'no-store',
  });
  res.end(json);
}
