import type { ArticlePage } from '../../content/articles.js';
import { reachablePages } from '../../content/search.js';
import { queryWordsOf } from '../../search/highlight.js';
import { normalizeQuery } from '../../search/normalize.js';
import { represent, type Representation } from '../cache/representation.js';
import type { SearchQuery } from '../endpoints/query-schemas.js';
import { pageMeta, toSearchHit } from './serializers.js';

/** A search's response: its hits (with their highlights when asked for) and the page's meta. */
export function searchRepresentation(result: ArticlePage, q: SearchQuery): Representation {
  const meta = pageMeta(result, q.page, q.limit, q.locale);
  const { words } = normalizeQuery(q.q);
  const marked = q.highlight === 'true' ? queryWordsOf(words) : undefined;
  return represent(
    { data: result.articles.map((row) => toSearchHit(row, marked)), meta: { ...meta, q: q.q, words } },
    { page: meta.page, pages: reachablePages(meta.pages, q.limit) },
  );
}

