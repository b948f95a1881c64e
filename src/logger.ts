import { pino, type Logger, type DestinationStream } from 'pino';
import { TurnBatch } from './lib/log-batch.js';

export type { Logger } from 'pino';

// Secrets that must never reach a log line, wherever they appear in a logged object.
const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
  'authorization',
  'apiKey',
  'token',
  'cmsToken',
  'masterKey',
  '*.apiKey',
  '*.token',
  '*.cmsToken',
  '*.masterKey',
];

const CENSOR = '[redacted]';

// The paths above stop one level down (pino's redaction has no recursive wildcard, and each
// extra wildcard level costs on every line), while a secret can sit deeper: logging a whole
// loaded config puts the Meilisearch key at config.search.meilisearch.apiKey. Plain data
// (plain objects and arrays) is therefore also scrubbed by key name at any depth. Class
// instances (requests, sockets, errors) are left to their serializers and the paths above.
const SECRET_KEYS = new Set(['apikey', 'token', 'cmstoken', 'masterkey', 'authorization', 'cookie', 'x-api-key']);
const MAX_SCRUB_DEPTH = 12;

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Returns `value` itself when it holds no secret, else a copy with the secrets censored. */
function scrub(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object' || depth > MAX_SCRUB_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = scrub(item, depth + 1);
      if (next !== item) (copy ??= [...value])[i] = next;
    });
    return copy ?? value;
  }
  if (!isPlainObject(value)) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const item = value[key];
    const next = SECRET_KEYS.has(key.toLowerCase()) && item !== undefined ? CENSOR : scrub(item, depth + 1);
    if (next !== item) (copy ??= { ...value })[key] = next;
  }
  return copy ?? value;
}

export interface LoggerOptions {
  level: string;
  name?: string;
  /** Where log lines go; stdout by default. Tests pass a stream to read the lines back. */
  destination?: DestinationStream;
  /**
   * Write stdout once per turn of the event loop (the API, one line per request; see
   * src/lib/log-batch.ts). Processes that log little (the worker, the CLI) write each line at once.
   */
  batched?: boolean;
}

/**
 * pino's isoTime, made once per millisecond: the API writes a line per request, thousands in
 * a second, and formatting a Date was a measurable part of each.
 */
let lastTime = { ms: NaN, text: '' };
function isoTime(): string {
  const ms = Date.now();
  if (ms !== lastTime.ms) lastTime = { ms, text: `,"time":"${new Date(ms).toISOString()}"` };
  return lastTime.text;
}

/**
 * The API's log lines waiting for a stdout nobody reads (a stuck pipe): past this, new lines
 * are dropped rather than kept without bound. The API never waits for its log reader.
 */
const MAX_PENDING_BYTES = 32 * 1024 * 1024;

/** One pino setup for the API, the worker and the CLI: JSON lines, secrets redacted. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      name: options.name,
      redact: { paths: REDACT_PATHS, censor: CENSOR },
      formatters: {
        log: (object) => scrub(object, 0) as Record<string, unknown>,
        bindings: (bindings) => scrub(bindings, 0) as Record<string, unknown>,
      },
      base: { pid: process.pid },
      timestamp: isoTime,
    },
    options.destination ?? (options.batched ? new TurnBatch(pino.destination({ dest: 1, sync: false, maxLength: MAX_PENDING_BYTES })) : pino.destination({ dest: 1, sync: false })),
  );
}

/**
 * Writes every line the logger still holds, then calls back: the API's graceful stop, before
 * it exits (src/lib/log-batch.ts). Other outputs are flushed and the callback runs at once.
 */
export function endLogOutput(logger: Logger, callback: () => void): void {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  if (stream instanceof TurnBatch) return stream.end(callback);
  logger.flush();
  callback();
}
