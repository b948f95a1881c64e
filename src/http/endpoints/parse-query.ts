import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { InvalidParameterError } from '../../errors.js';

/**
 * Parses a request's query string with an endpoint's schema. Only the parameters the schema
 * knows are looked at (unknown ones are ignored, as partners were told); one of them given
 * twice is a 400, since there is no right way to choose between the two values.
 */
export function parseQuery<S extends z.ZodObject>(req: Pick<IncomingMessage, 'url'>, schema: S): z.output<S> {
  const url = req.url ?? '';
  const raw = url.indexOf('?');
  const search = raw === -1 ? '' : url.slice(raw + 1);
  // Repeated pages repeat their query string: its parse is remembered (a pure function of the
  // string), which saves URLSearchParams and the schema on the cached path.
  let parsed = remembered.get(schema);
  if (!parsed) remembered.set(schema, (parsed = new Map()));
  const known = parsed.get(search);
  if (known !== undefined) return known as z.output<S>;
  const result = parseFresh(search, schema);
  if (search.length <= MAX_REMEMBERED_LENGTH) {
    if (parsed.size >= MAX_REMEMBERED) parsed.clear();
    parsed.set(search, Object.freeze(result));
  }
  return result;
}

// Bounded: at most 1,000 query strings of at most 200 characters per schema (a few hundred KB).
const MAX_REMEMBERED = 1_000;
const MAX_REMEMBERED_LENGTH = 200;
const remembered = new WeakMap<z.ZodObject, Map<string, unknown>>();

function parseFresh<S extends z.ZodObject>(search: string, schema: S): z.output<S> {
  const params = new URLSearchParams(search);
  const input: Record<string, string> = {};
  for (const name of Object.keys(schema.shape)) {
    const values = params.getAll(name);
    if (values.length > 1) {
      throw new InvalidParameterError(name, `${name} was given ${values.length} times; send it once.`);
    }
    if (values.length === 1) input[name] = values[0] as string;
  }
  const result = schema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0];
    const param = String(issue?.path[0] ?? 'query');
    throw new InvalidParameterError(param, issue?.message ?? `${param} is not valid.`);
  }
  return result.data;
}
