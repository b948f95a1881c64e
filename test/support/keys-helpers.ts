import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { runCli, type RunResult } from './run-node.js';

/* Shared by the keys CLI suites: the usage-error contract and reading what the CLI wrote. */

export interface CreatedJson {
  id: number;
  partner: string;
  key: string;
  created_at: string;
  expires_at: string | null;
  rate_limit_per_minute: number | null;
}

export interface SummaryJson {
  id: number;
  partner: string;
  prefix: string;
  status: 'active' | 'revoked' | 'expired';
  created_at: string;
  revoked_at: string | null;
  expires_at: string | null;
  last_used_at: string | null;
  rate_limit_per_minute: number | null;
  replaced_by: number | null;
}

/** The usage-error contract: exit 1, nothing on stdout, exactly one line on stderr, no stack. */
export function expectOneLineFailure(result: RunResult): string {
  expect(result.timedOut).toBe(false);
  expect(result.code, result.stdout).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr.trim()).not.toBe('');
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).not.toMatch(/\.(js|ts):\d+/);
  return result.stderr.trim();
}

/** Runs a command with --json and returns its one line of output, parsed. */
export async function cliJson<T>(args: string[], keysPath: string, env: Record<string, string> = {}): Promise<T> {
  const result = await runCli([...args, '--json'], keysPath, env);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(result.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(result.stdout) as T;
}

export function readRows<T = Record<string, unknown>>(path: string, sql = 'SELECT * FROM api_keys ORDER BY id'): T[] {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}
