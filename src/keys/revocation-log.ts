import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';

/*
 * The revocation log: one JSON line per revocation, appended beside the keys database
 * (`<KEYS_DATABASE_PATH>.revocations`) by `keys revoke`, after the revocation is committed.
 * A restore reads it back, so that a key revoked after the backup stays revoked even when the
 * live database it would otherwise read them from is missing or unreadable (the usual reason
 * to restore). It holds what the keys database holds (the key's SHA-256, never the key), and
 * is never rewritten: a lost line only costs what the log exists to add.
 */

export interface Revocation {
  id: number;
  prefix: string;
  hash: string;
  revoked_at: string;
}

export function revocationLogPath(keysPath: string): string {
  return `${keysPath}.revocations`;
}

/** Appends one revocation and flushes it to disk; throws what the disk throws. */
export function appendRevocation(keysPath: string, revocation: Revocation): void {
  const fd = openSync(revocationLogPath(keysPath), 'a', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(revocation)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The revocations logged, or undefined when there is no log (or it cannot be read). */
export function readRevocationLog(keysPath: string): Revocation[] | undefined {
  const path = revocationLogPath(keysPath);
  if (!existsSync(path)) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const entries: Revocation[] = [];
  for (const line of text.split('\n')) {
    // A line cut by a crash mid-append, or damaged: skipped, the others still count.
    try {
      const entry = JSON.parse(line) as Partial<Revocation>;
      if (typeof entry.hash === 'string' && typeof entry.revoked_at === 'string') entries.push(entry as Revocation);
    } catch {
      continue;
    }
  }
  return entries;
}
