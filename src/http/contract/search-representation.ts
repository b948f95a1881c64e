import type { ArticlePage } from '../../content/articles.js';
import { reachablePages } from '../../content/search.js';
import { queryWordsOf } from '../../search/highlight.js';
import { normalizeQuery } from '../../search/normalize.js';
import { represent, type Representation } from '../cache/representation.js';
import type { SearchQuery } from '../endpoints/query-schemas.js';
import { pick } from './fields.js';
import { pageMeta, toSearchHit } from './serializers.js';

/** A search's response: its hits (with their highlights when asked for) and the page's meta. */
export function searchRepresentation(result: ArticlePage, q: SearchQuery): Representation {
  const meta = pageMeta(result, q.page, q.limit, q.locale);
  const { words } = normalizeQuery(q.q);
  const highlighted = q.highlight === 'true' && (q.fields === undefined || q.fields.includes('highlights'));
  const marked = highlighted ? queryWordsOf(words) : undefined;
  return represent(
    { data: result.articles.map((row) => pick(toSearchHit(row, marked), q.fields)), meta: { ...meta, q: q.q, words } },
    { page: meta.page, pages: reachablePages(meta.pages, q.limit) },
  );
}

