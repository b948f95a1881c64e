import { tmpdir } from 'node:os';
import { expect } from 'vitest';
import { z } from 'zod';

/*
 * Assertions shared by the HTTP contract tests: the exact error shape, the promise that no
 * error leaks internals, and zod response schemas made strict at every level.
 */

/** Anything but `{ error: { code, message, param? } }` with an actionable English sentence fails. */
export function expectError(
  res: { status: number; headers: Record<string, string>; body: unknown; text: string },
  status: number,
  code: string,
  param?: string,
): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['cache-control']).toBe('no-store');
  const body = res.body as { error: { code: string; message: string; param?: string } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(Object.keys(body.error).sort()).toEqual(param === undefined ? ['code', 'message'] : ['code', 'message', 'param']);
  if (param !== undefined) expect(body.error.param).toBe(param);
  expectSentence(body.error.message);
  expectNoLeak(res.text);
}

/** One English sentence a developer can act on: some words, no line breaks, a full stop. */
export function expectSentence(message: unknown): void {
  expect(typeof message).toBe('string');
  expect(message).toMatch(/^[A-Za-z][^\n]{15,}[.]$/);
  expect((message as string).split(' ').length).toBeGreaterThanOrEqual(4);
}

/** No stack trace, source or temp file path, SQL fragment or SQLite detail in a response text. */
export function expectNoLeak(text: string): void {
  expect(text).not.toMatch(/\n\s*at\s/);
  expect(text).not.toMatch(/\bat [\w.<>$]+ \(/);
  // A source position (`server.js:12:5`), not a time of day (`16:00:00+08:00`).
  expect(text).not.toMatch(/[A-Za-z_$)]:\d+:\d+\b/);
  expect(text).not.toMatch(/\.(ts|js|mjs|cjs)\b/);
  expect(text).not.toContain('/tmp');
  expect(text).not.toContain(tmpdir());
  expect(text).not.toContain('/work/');
  expect(text).not.toContain('node_modules');
  // SQL fragments (the 405 message names the HTTP method, DELETE included, which is fine).
  expect(text).not.toMatch(/\b(SELECT|INSERT INTO|DELETE FROM|UPDATE \w+ SET|WHERE|JOIN|PRAGMA)\b/);
  expect(text).not.toMatch(/sqlite|fts5|bm25|drizzle/i);
  expect(text).not.toMatch(/<html|<!doctype|<pre/i);
}

/**
 * The schema with every object strict (unknown keys rejected) at every depth, so a live
 * response that gains, loses or renames a field anywhere fails validation.
 */
export function deepStrict<T extends z.ZodType>(schema: T): T {
  return strictNode(schema) as T;
}

function strictNode(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) {
    const shape: Record<string, z.ZodType> = {};
    for (const [key, value] of Object.entries(schema.shape)) shape[key] = strictNode(value as z.ZodType);
    return z.strictObject(shape);
  }
  if (schema instanceof z.ZodArray) return z.array(strictNode(schema.element as z.ZodType));
  if (schema instanceof z.ZodNullable) return strictNode(schema.unwrap() as z.ZodType).nullable();
  if (schema instanceof z.ZodOptional) return strictNode(schema.unwrap() as z.ZodType).optional();
  if (schema instanceof z.ZodRecord) {
    return z.record(schema.keyType as z.ZodString, strictNode(schema.valueType as z.ZodType));
  }
  return schema;
}

/** `2026-11-01T12:00:00Z` style timestamp `ms` milliseconds from an ISO instant. */
export function isoPlus(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString().replace('.000Z', 'Z');
}

export const MINUTE = 60_000;
