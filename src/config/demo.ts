import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { int, optional, parse, type Env } from './fields.js';

/* The demo's configuration (npm run demo). */

export const demoSchema = z.object({
  PORT: optional(int(0, 65_535)).default(3000),
  // Not DATABASE_PATH: the demo deletes and rewrites its snapshot at each start, and on a host
  // whose shell exports the production DATABASE_PATH that would replace the live snapshot.
  // A DEMO_ name can only have been set for the demo (tests use it for a temporary folder).
  DEMO_DATABASE_PATH: optional(z.string()).default('data/demo.db'),
});

/** Set in the environment of most operators' shells, and never read by the demo. */
const IGNORED_BY_DEMO = ['DATABASE_PATH', 'KEYS_DATABASE_PATH'] as const;

export interface DemoConfig {
  port: number;
  /** The demo's own snapshot, recreated at each start; its logs go beside it. */
  databasePath: string;
  /** The demo's own keys database beside it, never the real `keys.db` of that folder. */
  keysDatabasePath: string;
  /** The variables of IGNORED_BY_DEMO that are set, for the demo to say it ignores them. */
  ignoredVariables: string[];
}

export function loadDemoConfig(env: Env): Readonly<DemoConfig> {
  const v = parse(demoSchema, env);
  const databasePath = resolve(v.DEMO_DATABASE_PATH);
  const keysDatabasePath = join(dirname(databasePath), 'demo-keys.db');
  if (databasePath === keysDatabasePath) {
    throw new ConfigError('Invalid configuration: DEMO_DATABASE_PATH must not be named demo-keys.db: that is the demo keys database beside it');
  }
  return Object.freeze({
    port: v.PORT,
    databasePath,
    keysDatabasePath,
    ignoredVariables: IGNORED_BY_DEMO.filter((name) => (env[name] ?? '') !== ''),
  });
}
