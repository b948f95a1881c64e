import { badRequest, describeJson, invalidType, type MeiliError, unknownField } from './errors.js';
import { deepClone, isPlainObject } from './values.js';

export interface GranularFilterableRule {
  attributePatterns: string[];
  features: { facetSearch: boolean; filter: { equality: boolean; comparison: boolean } };
}
export type FilterableRule = string | GranularFilterableRule;

export interface TypoToleranceSettings {
  enabled: boolean;
  minWordSizeForTypos: { oneTypo: number; twoTypos: number };
  disableOnWords: string[];
  disableOnAttributes: string[];
  disableOnNumbers: boolean;
}

export interface LocalizedAttributeRule {
  attributePatterns: string[];
  locales: string[];
}

/** The full settings object, in the key order `GET /indexes/{uid}/settings` prints it. */
export interface IndexSettings {
  displayedAttributes: string[];
  searchableAttributes: string[];
  filterableAttributes: FilterableRule[];
  sortableAttributes: string[];
  rankingRules: string[];
  stopWords: string[];
  nonSeparatorTokens: string[];
  separatorTokens: string[];
  dictionary: string[];
  synonyms: Record<string, string[]>;
  distinctAttribute: string | null;
  proximityPrecision: 'byWord' | 'byAttribute';
  typoTolerance: TypoToleranceSettings;
  faceting: { maxValuesPerFacet: number; sortFacetValuesBy: Record<string, 'alpha' | 'count'> };
  pagination: { maxTotalHits: number };
  embedders: Record<string, unknown>;
  searchCutoffMs: number | null;
  localizedAttributes: LocalizedAttributeRule[] | null;
  facetSearch: boolean;
  prefixSearch: 'indexingTime' | 'disabled';
}

export const DEFAULT_RANKING_RULES = ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness'];

export function defaultSettings(): IndexSettings {
  return {
    displayedAttributes: ['*'],
    searchableAttributes: ['*'],
    filterableAttributes: [],
    sortableAttributes: [],
    rankingRules: [...DEFAULT_RANKING_RULES],
    stopWords: [],
    nonSeparatorTokens: [],
    separatorTokens: [],
    dictionary: [],
    synonyms: {},
    distinctAttribute: null,
    proximityPrecision: 'byWord',
    typoTolerance: {
      enabled: true,
      minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 },
      disableOnWords: [],
      disableOnAttributes: [],
      disableOnNumbers: false,
    },
    faceting: { maxValuesPerFacet: 100, sortFacetValuesBy: { '*': 'alpha' } },
    pagination: { maxTotalHits: 1000 },
    embedders: {},
    searchCutoffMs: null,
    localizedAttributes: null,
    facetSearch: true,
    prefixSearch: 'indexingTime',
  };
}

export type SettingsKey = keyof IndexSettings;
export const SETTINGS_KEYS = Object.keys(defaultSettings()) as SettingsKey[];

/** A validated PATCH body: only the keys sent, `null` meaning "reset to default". */
export type SettingsPatch = Partial<Record<SettingsKey, unknown>>;

/** Sub-routes `/indexes/{uid}/settings/<kebab-name>`; objects are PATCHed, everything else PUT. */
export const SETTINGS_ROUTES: Record<string, { key: SettingsKey; method: 'PUT' | 'PATCH' }> = Object.fromEntries(
  SETTINGS_KEYS.map((key) => {
    const kebab = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const method = key === 'typoTolerance' || key === 'faceting' || key === 'pagination' || key === 'embedders' ? 'PATCH' : 'PUT';
    return [kebab, { key, method }];
  }),
);

const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const codeFor = (key: string): string => `invalid_settings_${snake(key)}`;

const VALID_RULES = new Set(['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness', 'attributeRank', 'wordPosition']);

function stringList(key: string, value: unknown, path = `.${key}`): string[] {
  if (!Array.isArray(value)) throw invalidType(codeFor(key), path, 'an array', value);
  value.forEach((v, i) => {
    if (typeof v !== 'string') throw invalidType(codeFor(key), `${path}[${i}]`, 'a string', v);
  });
  return value as string[];
}

function bool(key: string, value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') throw invalidType(codeFor(key), path, 'a boolean', value);
  return value;
}

function uint(key: string, value: unknown, path: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw invalidType(codeFor(key), path, 'a positive integer', value);
  }
  return value;
}

function object(key: string, value: unknown, path: string, allowed: readonly string[]): Record<string, unknown> {
  if (!isPlainObject(value)) throw invalidType(codeFor(key), path, 'an object', value);
  for (const field of Object.keys(value)) {
    if (!allowed.includes(field)) {
      const err = unknownField(path, field, allowed);
      throw badRequest(codeFor(key), err.message);
    }
  }
  return value;
}

/** `["*"]` wins over anything listed with it, as in the engine. */
const starOr = (list: string[]): string[] => (list.includes('*') ? ['*'] : list);

function validateValue(key: SettingsKey, value: unknown): unknown {
  const path = `.${key}`;
  switch (key) {
    case 'displayedAttributes':
    case 'searchableAttributes':
      return starOr(stringList(key, value));
    case 'sortableAttributes':
      // Stored as a set by the engine: answered sorted and deduplicated.
      return [...new Set(stringList(key, value))].sort();
    case 'stopWords':
    case 'nonSeparatorTokens':
    case 'separatorTokens':
    case 'dictionary':
      return stringList(key, value);
    case 'filterableAttributes': {
      if (!Array.isArray(value)) throw invalidType(codeFor(key), path, 'an array', value);
      return value.map((rule: unknown, i) => {
        if (typeof rule === 'string') return rule;
        const p = `${path}[${i}]`;
        const o = object(key, rule, p, ['attributePatterns', 'features']);
        const patterns = stringList(key, o['attributePatterns'], `${p}.attributePatterns`);
        const features = o['features'] === undefined ? {} : object(key, o['features'], `${p}.features`, ['facetSearch', 'filter']);
        const filter =
          features['filter'] === undefined ? {} : object(key, features['filter'], `${p}.features.filter`, ['equality', 'comparison']);
        return {
          attributePatterns: patterns,
          features: {
            facetSearch: features['facetSearch'] === undefined ? false : bool(key, features['facetSearch'], `${p}.features.facetSearch`),
            filter: {
              equality: filter['equality'] === undefined ? true : bool(key, filter['equality'], `${p}.features.filter.equality`),
              comparison: filter['comparison'] === undefined ? false : bool(key, filter['comparison'], `${p}.features.filter.comparison`),
            },
          },
        } satisfies GranularFilterableRule;
      });
    }
    case 'rankingRules': {
      const rules = stringList(key, value);
      for (const rule of rules) {
        if (!VALID_RULES.has(rule) && !/^.+:(asc|desc)$/.test(rule)) {
          throw badRequest(
            codeFor(key),
            `Invalid value at \`.rankingRules[${rules.indexOf(rule)}]\`: \`${rule}\` ranking rule is invalid. Valid ranking rules are words, typo, sort, proximity, attribute, exactness and custom ranking rules.`,
          );
        }
      }
      return rules;
    }
    case 'synonyms': {
      if (!isPlainObject(value)) throw invalidType(codeFor(key), path, 'an object', value);
      const o = value;
      const out: Record<string, string[]> = {};
      for (const [word, list] of Object.entries(o)) out[word] = stringList(key, list, `${path}.${word}`);
      return out;
    }
    case 'distinctAttribute':
      if (typeof value !== 'string') throw invalidType(codeFor(key), path, 'a string', value);
      return value;
    case 'proximityPrecision':
      if (value !== 'byWord' && value !== 'byAttribute') {
        throw badRequest(codeFor(key), `Unknown value \`${String(value)}\` at \`${path}\`: expected one of \`byWord\`, \`byAttribute\``);
      }
      return value;
    case 'typoTolerance': {
      const o = object(key, value, path, ['enabled', 'minWordSizeForTypos', 'disableOnWords', 'disableOnAttributes', 'disableOnNumbers']);
      const out: Record<string, unknown> = {};
      if (o['enabled'] !== undefined) out['enabled'] = o['enabled'] === null ? null : bool(key, o['enabled'], `${path}.enabled`);
      if (o['disableOnNumbers'] !== undefined) {
        out['disableOnNumbers'] = o['disableOnNumbers'] === null ? null : bool(key, o['disableOnNumbers'], `${path}.disableOnNumbers`);
      }
      for (const list of ['disableOnWords', 'disableOnAttributes'] as const) {
        if (o[list] !== undefined) out[list] = o[list] === null ? null : stringList(key, o[list], `${path}.${list}`);
      }
      if (o['minWordSizeForTypos'] !== undefined) {
        if (o['minWordSizeForTypos'] === null) out['minWordSizeForTypos'] = null;
        else {
          const m = object(key, o['minWordSizeForTypos'], `${path}.minWordSizeForTypos`, ['oneTypo', 'twoTypos']);
          const sizes: Record<string, number | null> = {};
          for (const s of ['oneTypo', 'twoTypos'] as const) {
            if (m[s] !== undefined) sizes[s] = m[s] === null ? null : uint(key, m[s], `${path}.minWordSizeForTypos.${s}`, 255);
          }
          out['minWordSizeForTypos'] = sizes;
        }
      }
      return out;
    }
    case 'faceting': {
      const o = object(key, value, path, ['maxValuesPerFacet', 'sortFacetValuesBy']);
      const out: Record<string, unknown> = {};
      if (o['maxValuesPerFacet'] !== undefined) {
        out['maxValuesPerFacet'] = o['maxValuesPerFacet'] === null ? null : uint(key, o['maxValuesPerFacet'], `${path}.maxValuesPerFacet`);
      }
      if (o['sortFacetValuesBy'] !== undefined) {
        const by = o['sortFacetValuesBy'];
        if (by !== null && (!isPlainObject(by) || Object.values(by).some((v) => v !== 'alpha' && v !== 'count'))) {
          throw invalidType(codeFor(key), `${path}.sortFacetValuesBy`, 'an object of `alpha` or `count`', by);
        }
        out['sortFacetValuesBy'] = by;
      }
      return out;
    }
    case 'pagination': {
      const o = object(key, value, path, ['maxTotalHits']);
      const out: Record<string, unknown> = {};
      if (o['maxTotalHits'] !== undefined) {
        out['maxTotalHits'] = o['maxTotalHits'] === null ? null : uint(key, o['maxTotalHits'], `${path}.maxTotalHits`);
      }
      return out;
    }
    case 'embedders':
      // Storing embedders is harmless; searching with them is refused in search.ts.
      if (!isPlainObject(value)) throw invalidType(codeFor(key), path, 'an object', value);
      return value;
    case 'searchCutoffMs':
      return uint(key, value, path);
    case 'localizedAttributes': {
      if (!Array.isArray(value)) throw invalidType(codeFor(key), path, 'an array', value);
      return value.map((rule: unknown, i) => {
        const p = `${path}[${i}]`;
        const o = object(key, rule, p, ['attributePatterns', 'locales']);
        const locales = stringList(key, o['locales'] ?? [], `${p}.locales`);
        for (const locale of locales) assertLocale(locale, codeFor(key), `${p}.locales`);
        return { attributePatterns: stringList(key, o['attributePatterns'], `${p}.attributePatterns`), locales };
      });
    }
    case 'facetSearch':
      return bool(key, value, path);
    case 'prefixSearch':
      if (value !== 'indexingTime' && value !== 'disabled') {
        throw badRequest(codeFor(key), `Unknown value \`${String(value)}\` at \`${path}\`: expected one of \`indexingTime\`, \`disabled\``);
      }
      return value;
  }
}

/**
 * Locales the engine knows (ISO 639-3 codes of charabia's languages, plus their ISO 639-1
 * aliases). An unknown code is a 400, so a typo such as `zh-CN` fails here as it would there.
 */
const LOCALES = new Set(
  (
    'epo eng rus cmn spa por ita ben fra deu ukr kat ara hin jpn heb yid pol amh jav kor nob dan swe fin tur nld hun ces ' +
    'ell bul bel mar kan ron slv hrv srp mkd lit lav est tam vie urd tha guj uzb pan aze ind tel pes mal ori mya nep sin ' +
    'khm tuk aka zul sna afr lat slk cat tgl hye zho ' +
    'eo en ru zh es pt it bn fr de uk ka ar hi ja he yi pl am jv ko nb da sv fi tr nl hu cs el bg be mr kn ro sl hr sr ' +
    'mk lt lv et ta vi ur th gu uz pa az id te fa ml or my ne si km tk ak zu sn af la sk ca tl hy'
  ).split(' '),
);

export function assertLocale(locale: string, code: string, path: string): void {
  if (!LOCALES.has(locale)) {
    throw badRequest(code, `Unknown value \`${locale}\` at \`${path}\`: expected one of ${[...LOCALES].map((l) => `\`${l}\``).join(', ')}`);
  }
}

/** Validates a PATCH /settings body synchronously, as the route does (400 before any task). */
export function validateSettingsPatch(body: unknown): SettingsPatch {
  if (!isPlainObject(body)) throw badRequest('bad_request', `Invalid value type: expected an object, but found ${describeJson(body)}`);
  const patch: SettingsPatch = {};
  for (const [key, value] of Object.entries(body)) {
    if (!(SETTINGS_KEYS as string[]).includes(key)) throw unknownField('', key, SETTINGS_KEYS);
    if (value === undefined) continue;
    patch[key as SettingsKey] = value === null ? null : validateValue(key as SettingsKey, value);
  }
  return patch;
}

export function validateSettingValue(key: SettingsKey, value: unknown): SettingsPatch {
  return { [key]: value === null ? null : validateValue(key, value) };
}

/**
 * Applies a validated patch. Objects (typo tolerance, pagination, faceting) merge field by
 * field, `null` anywhere resets that part to its default: the engine's PATCH semantics.
 * Throws the errors the engine only finds while processing the task.
 */
export function applySettingsPatch(current: IndexSettings, patch: SettingsPatch): IndexSettings {
  const next = deepClone(current);
  const defaults = defaultSettings();
  const target = next as unknown as Record<SettingsKey, unknown>;
  for (const key of Object.keys(patch) as SettingsKey[]) {
    const value = patch[key];
    if (value === null) {
      target[key] = deepClone(defaults[key]);
      continue;
    }
    if (key === 'typoTolerance' || key === 'faceting' || key === 'pagination') {
      const base = next[key] as unknown as Record<string, unknown>;
      const def = defaults[key] as unknown as Record<string, unknown>;
      for (const [field, v] of Object.entries(value as Record<string, unknown>)) {
        if (v === null) base[field] = deepClone(def[field]);
        else if (field === 'minWordSizeForTypos') {
          const sizes = base[field] as Record<string, number>;
          const defSizes = def[field] as Record<string, number>;
          for (const [s, n] of Object.entries(v as Record<string, number | null>)) sizes[s] = n ?? (defSizes[s] as number);
        } else base[field] = deepClone(v);
      }
      continue;
    }
    target[key] = deepClone(value);
  }
  const { oneTypo, twoTypos } = next.typoTolerance.minWordSizeForTypos;
  if (oneTypo > twoTypos) {
    throw badRequest(
      'invalid_settings_typo_tolerance',
      `\`minWordSizeForTypos\` setting is invalid. \`oneTypo\` and \`twoTypos\` fields should be between \`0\` and \`255\`, and \`twoTypos\` should be greater or equals to \`oneTypo\` but found \`oneTypo: ${oneTypo}\` and twoTypos: ${twoTypos}\`.`,
    ) as MeiliError;
  }
  return next;
}

/** Attribute patterns allowed in filters, with the operators each allows. */
export function filterRules(settings: IndexSettings): { patterns: string[]; equality: boolean; comparison: boolean }[] {
  return settings.filterableAttributes.map((rule) =>
    typeof rule === 'string'
      ? { patterns: [rule], equality: true, comparison: true }
      : { patterns: rule.attributePatterns, equality: rule.features.filter.equality, comparison: rule.features.filter.comparison },
  );
}
