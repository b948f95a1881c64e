import { defaultSettings, type IndexSettings } from './settings.js';
import { CURRENT_MODE, type TokenizerMode } from './search/tokenize.js';
import { now, type Doc, type Instant } from './values.js';

export interface IndexState {
  uid: string;
  primaryKey: string | null;
  createdAt: Instant;
  updatedAt: Instant;
  /** External id -> document; Map order is the engine's internal id order (ties in ranking keep it). */
  documents: Map<string, Doc>;
  /** Top-level fields in first-seen order: the engine's fields-ids map, which `["*"]` follows. */
  fieldOrder: string[];
  settings: IndexSettings;
  /** Bumped on every change so cached search structures know they are stale. */
  generation: number;
  /**
   * How its documents were tokenized: by the version that created the index. A dumpless
   * upgrade (the fake's setVersion) keeps it, as the engine keeps what it indexed.
   */
  tokenizer: TokenizerMode;
}

export function newIndex(uid: string, primaryKey: string | null, tokenizer: TokenizerMode = CURRENT_MODE): IndexState {
  const at = now();
  return {
    uid,
    primaryKey,
    createdAt: at,
    updatedAt: at,
    documents: new Map(),
    fieldOrder: [],
    settings: defaultSettings(),
    generation: 0,
    tokenizer,
  };
}

export function touch(index: IndexState): void {
  index.updatedAt = now();
  index.generation += 1;
}

export function recordFields(index: IndexState, doc: Doc): void {
  for (const key of Object.keys(doc)) if (!index.fieldOrder.includes(key)) index.fieldOrder.push(key);
}

/** `GET /indexes/{uid}`: key order as the engine prints it. */
export function indexView(index: IndexState): Record<string, unknown> {
  return { uid: index.uid, createdAt: index.createdAt.text, updatedAt: index.updatedAt.text, primaryKey: index.primaryKey };
}
