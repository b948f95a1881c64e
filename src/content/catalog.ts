import { consistentRead, snapshotStates } from '../db/content.js';
import type { SnapshotStateRow } from '../db/schema.js';
import type { StoreSession } from '../db/snapshot-store.js';
import { ServiceUnavailableError } from '../errors.js';
import type { Locale } from '../locale.js';
import { LocaleView } from './locale-view.js';

/**
 * Keeps one LocaleView per locale and notices new content. The snapshot_state table is read
 * again only when the store's generation changes (another process committed), and a view is
 * rebuilt only when its locale's content version moved: per request this costs a map lookup.
 */
export class Catalog {
  private generation = -1;
  private connection = -1;
  private states = new Map<string, SnapshotStateRow>();
  private readonly views = new Map<Locale, LocaleView>();

  view(session: StoreSession, locale: Locale): LocaleView {
    if (session.connection !== this.connection) {
      // Another connection may be another file whose versions mean something else.
      this.views.clear();
      this.connection = session.connection;
    }
    if (session.generation !== this.generation) {
      this.states = new Map(snapshotStates(session.db).map((s) => [s.locale, s]));
      this.generation = session.generation;
    }
    const state = this.states.get(locale);
    if (!state) {
      throw new ServiceUnavailableError(
        'The service has no content yet; please retry in a few minutes.',
        `locale ${locale} has not been synced yet`,
      );
    }
    const current = this.views.get(locale);
    if (current && current.version === state.version) return current;
    // Read the state again inside the transaction: the view must match the rows it indexes.
    const view = consistentRead(session.db, () => {
      const fresh = snapshotStates(session.db).find((s) => s.locale === locale) ?? state;
      return LocaleView.build(session.db, { ...fresh, locale });
    });
    this.views.set(locale, view);
    return view;
  }
}
