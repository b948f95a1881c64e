import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';

/**
 * The section slugs the snapshot knows (any locale), for the CLI's warning about a scope naming
 * a section the CMS does not have (yet); undefined when the snapshot cannot be read, since the
 * keys CLI works without one. Read-only: the snapshot is never changed.
 */
export function knownSections(snapshotPath: string): Set<string> | undefined {
  if (!existsSync(snapshotPath)) return undefined;
  let sqlite: Database.Database | undefined;
  try {
    sqlite = new Database(snapshotPath, { readonly: true, fileMustExist: true });
    return new Set(sqlite.prepare('SELECT DISTINCT slug FROM sections').pluck().all() as string[]);
  } catch {
    return undefined;
  } finally {
    sqlite?.close();
  }
}
