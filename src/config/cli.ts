import { resolve } from 'node:path';
import { z } from 'zod';
import { common, int, keysDatabasePath, keysPath, optional, parse, type Env } from './fields.js';

/* The editors' CLI's configuration (npm run keys). */

export const cliSchema = z.object({
  ...common,
  ...keysPath,
  DATABASE_BUSY_TIMEOUT_MS: optional(int(0, 600_000)).default(60_000),
});

export interface CliConfig {
  /** The snapshot: read for `keys init`'s import and `backup --snapshot`, never written. */
  databasePath: string;
  keysDatabasePath: string;
  busyTimeoutMs: number;
}

export function loadCliConfig(env: Env): Readonly<CliConfig> {
  const v = parse(cliSchema, env);
  return Object.freeze({
    databasePath: resolve(v.DATABASE_PATH),
    keysDatabasePath: keysDatabasePath(v),
    busyTimeoutMs: v.DATABASE_BUSY_TIMEOUT_MS,
  });
}
