import { ServiceUnavailableError } from '../../errors.js';
import type { Locale } from '../../locale.js';
import { snapshotStates } from './content.js';
import type { SnapshotStateRow } from './schema.js';
import type { StoreSession } from './snapshot-store.js';

/**
 * One object per locale built from the snapshot, kept until that locale's content version
 * moves. The snapshot_state table is read again only when the session's generation changes
 * (another process committed), so per request this costs a map lookup. The API's Catalog and
 * each search thread keep their own views this way.
 */
export class LocaleVersions<T extends { readonly version: number }> {
  private generation = -1;
  private connection = -1;
  private states = new Map<string, SnapshotStateRow>();
  private readonly views = new Map<Locale, T>();

  /**
   * `built` hears of each object built: its locale, content version and the milliseconds it
   * took; `building` is called just before a build starts.
   */
  constructor(
    private readonly build: (session: StoreSession, locale: Locale, state: SnapshotStateRow) => T,
    private readonly built?: (locale: Locale, version: number, ms: number) => void,
    private readonly building?: () => void,
  ) {}

  get(session: StoreSession, locale: Locale): T {
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
    this.building?.();
    const started = performance.now();
    const next = this.build(session, locale, state);
    this.built?.(locale, next.version, Math.round(performance.now() - started));
    this.views.set(locale, next);
    return next;
  }
}
