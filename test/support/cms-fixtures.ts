import type { Locale } from '../../src/locale.js';
import type { RawArticle, RawSection } from '../../src/demo/cms-store.js';
import { mulberry32 } from './random.js';

let counter = 0;
// A fixed origin keeps timestamps readable; each record is one minute after the previous one.
const FIXTURE_EPOCH_MS = Date.UTC(2026, 9, 1, 8, 0, 0);

function next(): number {
  counter += 1;
  return counter;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** Formats an instant with a fixed offset, e.g. `2026-10-20T16:00:00+08:00` (the zh desk's style). */
export function isoWithOffset(ms: number, offsetMinutes: number): string {
  if (offsetMinutes === 0) return iso(ms);
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** A valid contract section; unique id and slug unless overridden. */
export function rawSection(overrides: Partial<RawSection> = {}): RawSection {
  const n = next();
  return {
    id: `sec-${n}`,
    slug: `section-${n}`,
    name: `Section ${n}`,
    description: `Everything about section ${n}`,
    active: true,
    position: n,
    updated_at: iso(FIXTURE_EPOCH_MS + n * 60_000),
    ...overrides,
  };
}

/** A valid, published contract article; unique id, slug and updated_at unless overridden. */
export function rawArticle(overrides: Partial<RawArticle> = {}): RawArticle {
  const n = next();
  const locale = overrides.locale ?? 'en';
  const slug = overrides.slug ?? `article-${n}`;
  return {
    id: `art-${n}`,
    locale,
    slug,
    status: 'published',
    title: `Article ${n}`,
    excerpt: `Excerpt of article ${n}.`,
    body_markdown: `## Article ${n}\n\nThe body of article ${n}.`,
    section_slug: null,
    author: 'Jane Doe',
    image: null,
    published_at: iso(FIXTURE_EPOCH_MS + n * 60_000 - 3_600_000),
    updated_at: iso(FIXTURE_EPOCH_MS + n * 60_000),
    url: `https://news.example.com/${locale}/${slug}`,
    ...overrides,
  };
}

export interface CorpusOptions {
  locale: Locale;
  count: number;
  /** Section slugs to spread articles over; about 10% get none. */
  sections?: readonly string[];
  seed?: number;
  /** updated_at of the first article (epoch ms or ISO); each next one is `stepMs` later. */
  startAt?: number | string;
  stepMs?: number;
  /** Ids are `${idPrefix}${n}`; `art-${locale}-` by default. */
  idPrefix?: string;
  /** Share of articles that are draft, scheduled or archived instead of published; 0 by default. */
  unpublishedRatio?: number;
}

export const CORPUS_SECTION_SLUGS = ['fiber-sources', 'ultrafast', 'materials-processing', 'semiconductors', 'sensing', 'markets'] as const;

/** The sections a corpus refers to, for loading next to it. */
export function corpusSections(locale: Locale, slugs: readonly string[] = CORPUS_SECTION_SLUGS): RawSection[] {
  return slugs.map((slug, i) => ({
    id: `sec-${locale}-${slug}`,
    slug,
    name: locale === 'zh' ? `栏目 ${i + 1}` : slug.replace(/-/g, ' ').replace(/^./, (c) => c.toUpperCase()),
    description: null,
    active: true,
    position: i + 1,
    updated_at: iso(FIXTURE_EPOCH_MS),
  }));
}

const UNPUBLISHED = ['draft', 'scheduled', 'archived'] as const;

// Published and archived articles went out up to three days before their last change;
// scheduled ones go out up to three days after it.
function publishShift(status: string, rng: () => number): number {
  const hours = 1 + Math.floor(rng() * 72);
  return (status === 'scheduled' ? hours : -hours) * 3_600_000;
}

/**
 * Deterministic articles for large tests and the benchmark: the same options give the same
 * records. Ids and updated_at ascend with the index; zh timestamps carry +08:00. Which search
 * terms appear how often is documented at CORPUS_TERMS.
 */
export function generateCorpus(options: CorpusOptions): RawArticle[] {
  const { locale, count } = options;
  const rng = mulberry32(options.seed ?? 1);
  const sections = options.sections ?? CORPUS_SECTION_SLUGS;
  const startMs = typeof options.startAt === 'string' ? Date.parse(options.startAt) : (options.startAt ?? FIXTURE_EPOCH_MS);
  const stepMs = options.stepMs ?? 60_000;
  const idPrefix = options.idPrefix ?? `art-${locale}-`;
  const unpublishedRatio = options.unpublishedRatio ?? 0;
  const offset = locale === 'zh' ? 480 : 0;
  const articles: RawArticle[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const id = `${idPrefix}${i + 1}`;
    const text = corpusText(locale, rng);
    const slugBase = locale === 'zh' ? 'news' : text.title.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 60);
    const slug = `${slugBase}-${id}`.replace(/[^A-Za-z0-9._~-]+/g, '-').replace(/^-+/, '');
    const updatedMs = startMs + i * stepMs;
    const status = rng() < unpublishedRatio ? UNPUBLISHED[Math.floor(rng() * UNPUBLISHED.length)]! : 'published';
    const sectionPick = rng();
    const hasImage = rng() < 0.6;
    articles[i] = {
      id,
      locale,
      slug,
      status,
      title: text.title,
      excerpt: text.excerpt,
      body_markdown: text.body,
      section_slug: sections.length > 0 && sectionPick >= 0.1 ? sections[Math.floor(rng() * sections.length)]! : null,
      author: rng() < 0.1 ? null : text.author,
      image: hasImage
        ? {
            url: `https://img.example.com/${id}.jpg`,
            alt: text.excerpt.slice(0, 80),
            credit: text.author,
            credit_url: `https://photos.example.com/@${i % 97}`,
            source_url: `https://photos.example.com/photo/${i + 1}`,
          }
        : null,
      published_at: status === 'draft' ? null : isoWithOffset(updatedMs + publishShift(status, rng), offset),
      updated_at: isoWithOffset(updatedMs, offset),
      url: `https://news.example.com/${locale}/${slug}`,
    };
  }
  return articles;
}

/**
 * Search terms by selectivity. Each article draws each marker independently, so in a corpus of
 * 100,000 about 50,000 articles contain `half`, about 5,000 `twentieth` and about 100
 * `thousandth` (in the body, and in the title of about half of those). No other word of the
 * vocabulary contains a marker, nor can two neighbouring zh words form one, so a substring
 * search counts exactly the marked articles. Every other vocabulary word appears in most
 * articles (pick those for "matches almost everything").
 */
export const CORPUS_TERMS = {
  en: { half: 'laser', twentieth: 'femtosecond', thousandth: 'lidar' },
  zh: { half: '激光', twentieth: '飞秒', thousandth: '雷达' },
} as const;
const MARKER_ODDS = { half: 0.5, twentieth: 0.05, thousandth: 0.001 } as const;

const EN = {
  companies: ['Meridian Photonics', 'Nordlicht Optik', 'Brightline Systems', 'Tianyu Photonics', 'Vantage Fiber', 'Sora Optics', 'Kestrel Beam', 'Aurora Diode'],
  authors: ['Jane Doe', 'Li Wei', 'Sam Lee', 'Maria Rossi', 'Kenji Sato', 'Anna Schmidt'],
  adjectives: ['high-power', 'ultrafast', 'compact', 'industrial', 'pulsed', 'continuous-wave', 'green', 'blue', 'infrared', 'ultraviolet', 'single-mode', 'multi-kilowatt', 'precise', 'automated', 'new', 'record', 'quarterly', 'European', 'Chinese'],
  nouns: ['fiber source', 'diode', 'beam', 'optics', 'wafer', 'weld seam', 'cutting head', 'galvo scanner', 'power supply', 'chiller', 'resonator', 'amplifier', 'pulse', 'wavelength', 'photonics', 'integrator', 'supplier', 'factory', 'battery tray', 'copper busbar', 'steel sheet', 'semiconductor fab', 'medical device', 'display panel', 'revenue', 'order book', 'market', 'shipment', 'margin', 'research group', 'prototype', 'module', 'sensor', 'spectrometer', 'crystal', 'mirror', 'lens', 'nozzle', 'robot cell', 'production line', 'automaker', 'startup'],
  verbs: ['ships', 'launches', 'unveils', 'acquires', 'reports', 'expands', 'cuts', 'welds', 'drills', 'marks', 'cleans', 'qualifies', 'doubles', 'targets', 'supplies', 'integrates', 'replaces'],
  preps: ['for', 'in', 'across', 'with', 'at', 'from'],
  headings: ['Results', 'Background', 'Technology', 'Market outlook', 'What comes next', 'Applications'],
  markers: { half: 'laser system', twentieth: 'femtosecond pulses', thousandth: 'lidar receiver' },
};

// No word ends with 激, 飞 or 雷, so joining words without spaces cannot create a marker.
const ZH = {
  companies: ['华光科技', '天宇光电', '星河精密', '明辉光学', '北辰半导体', '远航智能'],
  authors: ['王芳', '李伟', '张敏', '陈静', '刘洋'],
  adjectives: ['高功率', '超快', '紧凑型', '工业级', '国产', '新一代', '精密', '连续', '绿色', '蓝光', '红外', '紫外'],
  nouns: ['光纤', '焊接', '切割', '晶圆', '半导体', '电池', '汽车', '工厂', '光束', '芯片', '市场', '订单', '营收', '季度', '客户', '设备', '模块', '透镜', '光学', '研发', '产线', '机器人', '钢板', '显示屏', '医疗', '传感器', '精度', '波长', '脉冲', '光源'],
  verbs: ['推出', '发布', '收购', '扩大', '提升', '降低', '交付', '采用', '布局', '投资', '量产', '突破'],
  headings: ['业绩', '背景', '技术', '市场展望', '下一步', '应用'],
  markers: { half: '激光器件', twentieth: '飞秒脉冲', thousandth: '雷达接收' },
};

function pick<T>(rng: () => number, list: readonly T[]): T {
  return list[Math.floor(rng() * list.length)]!;
}

const EN_CAPITALIZED = EN.adjectives.map((a) => a[0]!.toUpperCase() + a.slice(1));
const MARKER_KEYS = Object.keys(MARKER_ODDS) as Array<keyof typeof MARKER_ODDS>;

function sentence(zh: boolean, rng: () => number, object?: string): string {
  if (zh) {
    const obj = object ?? pick(rng, ZH.adjectives) + pick(rng, ZH.nouns);
    return `${pick(rng, ZH.companies)}${pick(rng, ZH.verbs)}${obj}，${pick(rng, ZH.nouns)}${pick(rng, ZH.nouns)}${pick(rng, ZH.verbs)}${pick(rng, ZH.adjectives)}${pick(rng, ZH.nouns)}。`;
  }
  const obj = object ?? `${pick(rng, EN.adjectives)} ${pick(rng, EN.nouns)}`;
  return `${pick(rng, EN_CAPITALIZED)} ${pick(rng, EN.nouns)} ${pick(rng, EN.verbs)} ${obj} ${pick(rng, EN.preps)} the ${pick(rng, EN.nouns)} ${pick(rng, EN.preps)} ${pick(rng, EN.nouns)}.`;
}

// Bodies are drawn from a fixed pool of marker-free sentences: building 100,000 bodies word by
// word costs seconds and a mountain of garbage; picking whole sentences costs little.
const POOL_SIZE = 4096;
const pools: Partial<Record<Locale, string[]>> = {};
function sentencePool(locale: Locale): string[] {
  if (!pools[locale]) {
    const rng = mulberry32(0x5eed);
    pools[locale] = Array.from({ length: POOL_SIZE }, () => sentence(locale === 'zh', rng));
  }
  return pools[locale];
}

function corpusText(locale: Locale, rng: () => number): { title: string; excerpt: string; body: string; author: string } {
  const zh = locale === 'zh';
  const v = zh ? ZH : EN;
  const space = zh ? '' : ' ';
  const pool = sentencePool(locale);
  const markers = MARKER_KEYS.filter((k) => rng() < MARKER_ODDS[k]).map((k) => v.markers[k]);
  const titleParts = markers.filter(() => rng() < 0.5);
  titleParts.push(pick(rng, v.adjectives) + space + pick(rng, v.nouns));
  const title = pick(rng, v.companies) + space + pick(rng, v.verbs) + space + titleParts.join(zh ? '与' : ' and ');
  const blocks: string[] = [];
  const sections = 2 + Math.floor(rng() * 2);
  // Markers go into the body once each, as a sentence of their own in a random section.
  const markerAt = markers.map(() => Math.floor(rng() * sections));
  for (let s = 0; s < sections; s++) {
    blocks.push(`## ${pick(rng, v.headings)}`);
    for (let p = 0; p < 2; p++) {
      const sentences: string[] = [];
      if (p === 0) markers.forEach((m, i) => markerAt[i] === s && sentences.push(sentence(zh, rng, m)));
      const n = 3 + Math.floor(rng() * 3);
      for (let i = 0; i < n; i++) sentences.push(pick(rng, pool));
      blocks.push(sentences.join(space));
    }
    if (rng() < 0.3) blocks.push(`- ${pick(rng, pool)}\n- ${pick(rng, pool)}`);
  }
  return { title, excerpt: pick(rng, pool), body: blocks.join('\n\n'), author: pick(rng, v.authors) };
}
