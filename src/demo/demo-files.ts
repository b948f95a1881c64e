import Database from 'better-sqlite3';
import { closeSync, existsSync, openSync, readSync, rmSync } from 'node:fs';
import { UsageError } from '../errors.js';

/*
 * The demo recreates its snapshot and keys database at each start, so it deletes files. It
 * only ever deletes the ones it can prove it created: it stamps each new database with its
 * own application id in the SQLite header (where no migration or sync touches it) and checks
 * that stamp before deleting. A DEMO_DATABASE_PATH that names a real snapshot or keys
 * database is refused, the file untouched.
 */

/** "DEMO" in ASCII: the application id the demo writes into the header of its databases. */
const DEMO_APPLICATION_ID = 0x44454d4f;
const SQLITE_MAGIC = 'SQLite format 3\0';
const SIDE_FILES = ['-wal', '-shm'];

/**
 * Whether the file is a database the demo created. Read from the header's bytes (offset 68)
 * rather than through SQLite: reading them cannot create a -shm beside someone else's file.
 * The stamp goes in before the file is switched to WAL, so the main file always carries it.
 */
export function isDemoDatabase(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const header = Buffer.alloc(72);
    if (readSync(fd, header, 0, header.length, 0) < header.length) return false;
    return header.toString('latin1', 0, 16) === SQLITE_MAGIC && header.readUInt32BE(68) === DEMO_APPLICATION_ID;
  } catch {
    return false; // unreadable, a folder...: nothing the demo can prove is its own
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Refuses, deleting nothing, unless every file there is of the demo's own databases: each
 * path is absent with no -wal or -shm left over, or a database the demo created. `show`
 * turns a path into the one the message names.
 */
export function assertDemoOwns(paths: string[], show: (path: string) => string): void {
  for (const path of paths) {
    if (existsSync(path)) {
      if (!isDemoDatabase(path)) {
        throw new UsageError(
          `${show(path)} exists and is not a database the demo created, and the demo deletes only its own: set DEMO_DATABASE_PATH to a new file in another folder, or move that file away (a demo database from before the demo stamped its files is one: delete it, with its -wal and -shm files)`,
        );
      }
      continue;
    }
    const leftover = SIDE_FILES.map((suffix) => path + suffix).find((side) => existsSync(side));
    if (leftover) {
      throw new UsageError(
        `${show(leftover)} exists without its database, so the demo cannot tell whose it is: delete it yourself, or set DEMO_DATABASE_PATH to a new file in another folder`,
      );
    }
  }
}

/** Replaces each of the demo's databases (checked by assertDemoOwns) with a new, stamped, empty one. */
export function recreateDemoDatabases(paths: string[]): void {
  for (const path of paths) {
    for (const suffix of ['', ...SIDE_FILES]) rmSync(path + suffix, { force: true });
    createDemoDatabase(path);
  }
}

/** A new empty database stamped as the demo's; the worker and the keys CLI migrate it as any new file. */
export function createDemoDatabase(path: string): void {
  const sqlite = new Database(path);
  try {
    sqlite.pragma(`application_id = ${DEMO_APPLICATION_ID}`);
  } finally {
    sqlite.close();
  }
}
