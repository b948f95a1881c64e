import { drizzle } from './drizzle.js';
import * as schema from '../snapshot/schema.js';
import { openReaderFile, openWriterFile, type Db, type OpenOptions, type WriterOptions } from './sqlite-file.js';

/*
 * The snapshot's connections wrapped in drizzle-orm, for the code that uses its query builder
 * (the worker's sync runs, the API's health): the file handling itself is in sqlite-file.ts,
 * which the search threads use without drizzle.
 */

export * from './sqlite-file.js';

/** openWriterFile (sqlite-file.ts), with drizzle's query builder. */
export function openWriter(path: string, options: WriterOptions): Db {
  return drizzle(openWriterFile(path, options), { schema });
}

/** openReaderFile (sqlite-file.ts), with drizzle's query builder. */
export function openReader(path: string, options: OpenOptions): Db {
  return drizzle(openReaderFile(path, options), { schema });
}
