import { consistentRead, snapshotStates } from '../db/snapshot/content.js';
import { LocaleVersions } from '../db/snapshot/locale-versions.js';
import type { StoreSession } from '../db/snapshot/snapshot-store.js';
import type { Locale } from '../locale.js';
import { LocaleView } from './locale-view.js';

/**
 * Keeps one LocaleView per locale and notices new content (src/db/snapshot/locale-versions.ts): a view
 * is rebuilt only when its locale's content version moved.
 */
export class Catalog {
  private readonly views: LocaleVersions<LocaleView>;
  private beforeBuild: (() => void) | undefined;

  /** `built` hears of each view built: its locale, content version and the milliseconds it took. */
  constructor(built?: (locale: Locale, version: number, ms: number) => void) {
    this.views = new LocaleVersions<LocaleView>(
      (session, locale, state) =>
        // Read the state again inside the transaction: the view must match the rows it indexes.
        consistentRead(session.db, () => {
          const fresh = snapshotStates(session.db).find((s) => s.locale === locale) ?? state;
          return LocaleView.build(session.db, { ...fresh, locale });
        }),
      built,
      () => this.beforeBuild?.(),
    );
  }

  /**
   * Registers what must run before a view is built, since a build holds the thread for a
   * while (about 0.4 s per 100,000 articles); one listener, the last registered.
   */
  beforeSlowWork(listener: () => void): void {
    this.beforeBuild = listener;
  }

  view(session: StoreSession, locale: Locale): LocaleView {
    return this.views.get(session, locale);
  }
}
