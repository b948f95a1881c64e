import { createRequire } from 'node:module';

/*
 * drizzle-orm's values, loaded with require (its CommonJS build) instead of import. Why: the
 * ES module loader of Node 24 and 26 parses a package's whole "exports" map again for every
 * file it loads from that package (getPackageScopeConfig spreads the lazily parsed field),
 * and drizzle-orm's map is 178 KB. Imported, its files cost about 1 s and 150 MB of garbage at
 * every start of the API, the worker and the CLI; required, 0.1 s and 10 MB. The garbage was
 * still being collected while the API answered its first searches. Every module of this
 * project takes drizzle's values from here (types still come from `import type`), so one copy
 * of drizzle is loaded; but migrate.ts, which the search threads load too, imports the
 * migrator, a file of its own that needs nothing else of drizzle.
 */
const require = createRequire(import.meta.url);

export const { and, asc, desc, eq, ne, sql } = require('drizzle-orm') as typeof import('drizzle-orm');
export const { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } =
  require('drizzle-orm/sqlite-core') as typeof import('drizzle-orm/sqlite-core');
export const { drizzle } = require('drizzle-orm/better-sqlite3') as typeof import('drizzle-orm/better-sqlite3');
