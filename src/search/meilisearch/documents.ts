import { createHash } from 'node:crypto';
import type { SearchDocumentRow } from '../../db/snapshot/search-documents.js';
import { parseIsoToMs } from '../../lib/time.js';

/**
 * How documents are shaped before they are sent. Bumped whenever that changes (spacing, body
 * parts): the worker records it with the engine version it indexed with, and an index built
 * with another format is rebuilt, so the change reaches every document.
 */
export const DOCUMENT_FORMAT = 2;

/**
 * Meilisearch indexes each attribute up to position 65,536 (milli MAX_POSITION_PER_ATTRIBUTE):
 * a word adds 1, a hard separator (`. `, `, `, `。`, `，`, `!`, `?`, `;`...) 8. Words past it
 * are not indexed at all. Long bodies are therefore sent in parts, `body`, `body_2`, ...,
 * each under this estimate; the estimate counts the most positions the engine could give a
 * text (every Chinese character a word, every separator hard), so no part reaches the limit.
 */
export const BODY_PART_POSITIONS = 60_000;
/** Parts of a body at most: about 1.4 million positions. Text past the last part's limit is not searchable. */
export const MAX_BODY_PARTS = 24;

/** The field names of the body parts, in order: `body`, `body_2`, ... */
export const BODY_FIELDS: readonly string[] = Array.from({ length: MAX_BODY_PARTS }, (_, i) => (i === 0 ? 'body' : `body_${i + 1}`));

export interface MeiliDocument {
  id: number;
  slug: string;
  title: string;
  excerpt: string;
  /** The body's first part; longer bodies continue in `body_2`, `body_3`... */
  body: string;
  [bodyPart: `body_${number}`]: string;
  section_slug: string | null;
  section_name: string;
  author: string;
  /** Epoch seconds, for the `published_at_ts <= now` filter and the newest-first tie-break. */
  published_at_ts: number | null;
  /** A digest of everything above: a full sync compares it with the snapshot's to send only what differs. */
  h: string;
}

// ASCII letters or digits written against Chinese characters, either way round.
const HAN_THEN_ASCII = /(\p{Script=Han})(?=[A-Za-z0-9])/gu;
const ASCII_THEN_HAN = /([A-Za-z0-9])(?=\p{Script=Han})/gu;

/**
 * A space at each boundary between Chinese characters and ASCII letters or digits. Meilisearch
 * (charabia) attaches digits to the script group before them and, before 1.25, re-cuts what
 * jieba returns character by character: `发布于2024年` is indexed 2 / 0 / 2 / 4 and `2024`
 * finds nothing. Between spaces, `2024` is a number piece that is never segmented, on every
 * version. `5G`/`3D` after Chinese are still indexed as two adjacent words (5 / g); the engine
 * finds them by trying a query word as two adjacent words. The SQLite engine segments the
 * snapshot itself and never sees this text.
 */
export function spaceScripts(text: string): string {
  return text.replace(HAN_THEN_ASCII, '$1 ').replace(ASCII_THEN_HAN, '$1 ');
}

// Words (a Chinese character each, at most), runs of other letters and digits, separators.
const PIECES = /\p{Script=Han}|[\p{L}\p{N}\p{M}]+|[^\p{L}\p{N}\p{M}]+/gu;
const DIGIT_LETTER_SWITCH = /(?<=\p{N})(?=\p{L})|(?<=\p{L})(?=\p{N})/gu;

/** Cuts a body into parts of at most BODY_PART_POSITIONS estimated positions, at word boundaries. */
export function bodyParts(body: string, budget = BODY_PART_POSITIONS, maxParts = MAX_BODY_PARTS): string[] {
  const parts: string[] = [];
  let start = 0;
  let position = 0;
  let separatorBefore = false;
  for (const m of body.matchAll(PIECES)) {
    const piece = m[0];
    if (!/[\p{L}\p{N}\p{M}]/u.test(piece)) {
      separatorBefore = true;
      continue;
    }
    const cost = (separatorBefore ? 8 : 1) + (piece.match(DIGIT_LETTER_SWITCH)?.length ?? 0);
    separatorBefore = false;
    if (position + cost >= budget && parts.length < maxParts - 1 && (m.index ?? 0) > start) {
      parts.push(body.slice(start, m.index));
      start = m.index ?? 0;
      position = cost;
      continue;
    }
    position += cost;
  }
  parts.push(body.slice(start));
  return parts;
}

export function toMeiliDocument(row: SearchDocumentRow): MeiliDocument {
  const published = row.published_at === null ? undefined : parseIsoToMs(row.published_at);
  const fields: Omit<MeiliDocument, 'h'> = {
    id: row.id,
    slug: row.slug,
    title: spaceScripts(row.title),
    excerpt: spaceScripts(row.excerpt),
    body: '',
    section_slug: row.section_slug,
    section_name: spaceScripts(row.section_name ?? ''),
    author: spaceScripts(row.author),
    published_at_ts: published === undefined ? null : Math.floor(published / 1000),
  };
  bodyParts(spaceScripts(row.body)).forEach((part, i) => {
    (fields as Record<string, unknown>)[BODY_FIELDS[i] as string] = part;
  });
  return { ...fields, h: documentDigest(fields) };
}

/** 16 hex digits of SHA-256 over the document's JSON, with the format: a new format changes every digest. */
export function documentDigest(fields: Omit<MeiliDocument, 'h'>): string {
  return createHash('sha256').update(`${DOCUMENT_FORMAT}\n${JSON.stringify(fields)}`).digest('hex').slice(0, 16);
}
