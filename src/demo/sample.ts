import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCALES } from '../locale.js';
import { projectRoot } from '../lib/paths.js';
import { formatUtcSeconds } from '../lib/time.js';
import { CmsStore, type RawArticle, type RawSection } from './cms-store.js';

interface SampleFile {
  sections: RawSection[];
  articles: RawArticle[];
  /** Articles to publish this many minutes after the demo starts, so one appears live. */
  demo?: { publish_in_minutes?: Record<string, number> };
}

/**
 * The demo CMS's content: data/sample/{en,zh}.json, written as the CMS contract sends it.
 * The scheduled article of each locale is moved to a few minutes after `now`, so the demo
 * shows a scheduled article appearing by itself.
 */
export function loadSampleStore(now: number): CmsStore {
  const store = new CmsStore();
  for (const locale of LOCALES) {
    const file = JSON.parse(readFileSync(join(projectRoot(), 'data', 'sample', `${locale}.json`), 'utf8')) as SampleFile;
    for (const section of file.sections) store.upsertSection(locale, section);
    const schedule = file.demo?.publish_in_minutes ?? {};
    for (const article of file.articles) {
      const minutes = schedule[article.slug];
      store.upsertArticle(
        minutes === undefined
          ? article
          : { ...article, published_at: formatUtcSeconds(now + minutes * 60_000), updated_at: formatUtcSeconds(now) },
      );
    }
  }
  return store;
}
