import { consistentRead } from '../../../db/snapshot/content.js';
import { LocaleExposure } from '../../../db/snapshot/locale-exposure.js';
import { LocaleVersions } from '../../../db/snapshot/locale-versions.js';
import type { StoreSession } from '../../../db/snapshot/snapshot-store.js';
import type { Locale } from '../../../locale.js';

/**
 * A search thread's own view of what each locale exposes: one LocaleExposure per locale, the
 * same index as the API's LocaleView holds (search threads cannot share the main thread's
 * objects, so each builds its own), rebuilt when the locale's content version moved, as the
 * API's Catalog does.
 */
export class SnapshotViews {
  private readonly tables: LocaleVersions<LocaleExposure>;

  /** `built` hears of each view built: its locale, content version and the milliseconds it took. */
  constructor(built?: (locale: Locale, version: number, ms: number) => void) {
    this.tables = new LocaleVersions<LocaleExposure>(
      // One read transaction: the sections and the ordering come from one commit.
      (session, locale, state) => consistentRead(session.db, () => LocaleExposure.build(session.db, locale, state.version)),
      built,
    );
  }

  table(session: StoreSession, locale: Locale): LocaleExposure {
    return this.tables.get(session, locale);
  }
}
