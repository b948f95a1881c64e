import { startCmsServer } from '../../src/demo/cms-server.js';
import { CmsStore } from '../../src/demo/cms-store.js';
import { LOCALES } from '../../src/locale.js';
import { formatUtcSeconds } from '../../src/lib/time.js';
import { corpusSections, generateCorpus } from '../support/cms-fixtures.js';
import { exited, startNode, watchPeakMemory } from './processes.js';

export interface SyncFigures {
  articles: number;
  fullSeconds: number;
  fullPeakMb: number;
  incrementalSeconds: number;
  incrementalChanges: number;
  incrementalPeakMb: number;
}

async function syncOnce(args: string[], env: Record<string, string>): Promise<{ seconds: number; peakMb: number }> {
  const started = performance.now();
  const child = startNode('sync/main.js', ['--once', ...args], { ...env, LOG_LEVEL: 'warn' });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d));
  const peak = watchPeakMemory(child);
  const code = await exited(child);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`sync ${args.join(' ')} failed: ${stderr.trim()}`);
  return { seconds, peakMb: peak() };
}

/**
 * The worker's figures: a full sync of the whole corpus from a CMS on loopback into a new
 * snapshot, then an incremental sync of 100 changed articles. The worker runs as it does in
 * production: a child process started with `--once`.
 */
export async function benchSync(databasePath: string, counts: Record<'en' | 'zh', number>): Promise<SyncFigures> {
  const store = new CmsStore();
  for (const locale of LOCALES) {
    for (const section of corpusSections(locale)) store.upsertSection(locale, section);
    store.upsertArticles(generateCorpus({ locale, count: counts[locale], seed: locale === 'en' ? 1 : 2, startAt: '2025-01-01T00:00:00Z', stepMs: 5 * 60_000 }));
  }
  const cms = await startCmsServer({ store });
  const env = { DATABASE_PATH: databasePath, CMS_BASE_URL: cms.url };
  try {
    const full = await syncOnce(['--full'], env);

    // 100 changes: new titles on existing articles, stamped now.
    const now = formatUtcSeconds(Date.now());
    for (let i = 1; i <= 100; i++) {
      const article = store.getArticle(`art-en-${i * 37}`)!;
      store.upsertArticle({ ...article, title: `${article.title} (updated)`, updated_at: now });
    }
    const incremental = await syncOnce([], env);
    return {
      articles: counts.en + counts.zh,
      fullSeconds: full.seconds,
      fullPeakMb: full.peakMb,
      incrementalSeconds: incremental.seconds,
      incrementalChanges: 100,
      incrementalPeakMb: incremental.peakMb,
    };
  } finally {
    await cms.close();
  }
}
