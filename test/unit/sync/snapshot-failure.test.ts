import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { snapshotOpenFailure } from '../../../sync/snapshot-failure.js';

describe('snapshotOpenFailure', () => {
  it('turns what the file or the disk did into one line naming the path', () => {
    const locked = snapshotOpenFailure(new Database.SqliteError('database is locked', 'SQLITE_BUSY'), '/srv/snapshot.db', 2_000);
    expect(locked).toBeInstanceOf(UsageError);
    expect(locked!.message).toBe(
      'the snapshot at /srv/snapshot.db stayed locked by another process past DATABASE_BUSY_TIMEOUT_MS (2000 ms): retry once it has finished',
    );
    expect(snapshotOpenFailure(new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_READ'), '/srv/snapshot.db', 1)!.message).toMatch(
      /^the snapshot at \/srv\/snapshot\.db could not be read or written \(SQLITE_IOERR_READ\)/,
    );
  });

  it('leaves any other SQLite error (a failing migration is a bug of ours) to keep its stack', () => {
    expect(snapshotOpenFailure(new Database.SqliteError('table articles already exists', 'SQLITE_ERROR'), '/srv/snapshot.db', 1)).toBeUndefined();
    expect(snapshotOpenFailure(new Database.SqliteError('NOT NULL constraint failed', 'SQLITE_CONSTRAINT_NOTNULL'), '/srv/snapshot.db', 1)).toBeUndefined();
  });
});
