import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { article, Mirror, section, startFeedHarness, type FeedHarness } from '../../support/feed-harness.js';

/*
 * The change feed's central promise, over generated histories: whatever the CMS does and
 * whichever kind of sync runs, a mirror built from the feed equals the catalogue the API
 * exposes, after every step, and a reader that reads one page per step across all of it ends
 * equal too, having received no change twice.
 */

const IDS = ['a', 'b', 'c', 'd', 'e', 'f'] as const;
const id = fc.constantFrom(...IDS);

type Op =
  | { op: 'publish'; id: string; section: 'news' | 'old'; inMinutes: number }
  | { op: 'edit'; id: string }
  | { op: 'unpublish'; id: string; status: 'draft' | 'archived' | 'scheduled' }
  | { op: 'delete'; id: string }
  | { op: 'republish'; id: string }
  | { op: 'rename'; id: string }
  | { op: 'section'; active: boolean }
  | { op: 'time'; minutes: number }
  | { op: 'sync'; kind: 'full' | 'incremental' | 'auto' | 'reindex' }
  | { op: 'page' };

const ops: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('publish' as const), id, section: fc.constantFrom('news' as const, 'old' as const), inMinutes: fc.constantFrom(-30, -1, 0, 5, 90) }),
  fc.record({ op: fc.constant('edit' as const), id }),
  fc.record({ op: fc.constant('unpublish' as const), id, status: fc.constantFrom('draft' as const, 'archived' as const, 'scheduled' as const) }),
  fc.record({ op: fc.constant('delete' as const), id }),
  fc.record({ op: fc.constant('republish' as const), id }),
  fc.record({ op: fc.constant('rename' as const), id }),
  { arbitrary: fc.record({ op: fc.constant('section' as const), active: fc.boolean() }), weight: 2 },
  fc.record({ op: fc.constant('time' as const), minutes: fc.constantFrom(1, 10, 60, 120) }),
  { arbitrary: fc.record({ op: fc.constant('sync' as const), kind: fc.constantFrom('full' as const, 'incremental' as const, 'auto' as const, 'reindex' as const) }), weight: 4 },
  fc.record({ op: fc.constant('page' as const) }),
);

let renames = 0;

function perform(h: FeedHarness, step: Op): Promise<unknown> | undefined {
  const store = h.cms.store;
  const now = h.clock();
  const stamp = h.nowIso();
  const current = 'id' in step ? store.getArticle(step.id) : undefined;
  switch (step.op) {
    case 'publish':
      store.upsertArticle(
        article(step.id, {
          section_slug: step.section,
          published_at: new Date(now + step.inMinutes * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
          updated_at: stamp,
          ...(current ? { slug: current.slug } : {}),
        }),
      );
      return;
    case 'edit':
      if (current) store.upsertArticle({ ...current, title: `${current.title}'`, updated_at: stamp });
      return;
    case 'unpublish':
      if (current) store.upsertArticle({ ...current, status: step.status, updated_at: stamp });
      return;
    case 'republish':
      if (current) store.upsertArticle({ ...current, status: 'published', updated_at: stamp });
      return;
    case 'delete':
      store.removeArticle(step.id);
      return;
    case 'rename':
      if (current) store.upsertArticle({ ...current, slug: `story-${step.id}-${++renames}`, updated_at: stamp });
      return;
    case 'section':
      store.upsertSection('en', section('old', { position: 2, active: step.active, updated_at: stamp }));
      return;
    case 'time':
      h.clock.advance(step.minutes * 60_000);
      return;
    case 'sync':
      return h.sync(step.kind);
    case 'page':
      return undefined;
  }
}

describe('change feed over generated CMS histories', () => {
  it('a mirror built from the feed equals the exposed catalogue after every step; a slow reader never misses or repeats', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(ops, { minLength: 4, maxLength: 18 }), async (steps) => {
        const h = await startFeedHarness();
        try {
          h.cms.store.upsertSection('en', section('news'));
          h.cms.store.upsertSection('en', section('old', { position: 2 }));
          h.cms.store.upsertSection('zh', section('news'));
          h.cms.store.upsertArticle(article('seed', { updated_at: h.nowIso() }));
          h.cms.store.upsertArticle(article('b', { updated_at: h.nowIso(), section_slug: 'old' }));
          // Scheduled for two minutes after the first sync: the first `time` step publishes it.
          h.cms.store.upsertArticle(article('c', { updated_at: h.nowIso(), published_at: new Date(h.clock() + 120_000).toISOString().replace(/\.\d{3}Z$/, 'Z') }));
          await h.sync('full');
          const follower = new Mirror(h, 'en', 3);
          const slow = new Mirror(h, 'en', 2);
          for (const step of steps) {
            // Every CMS change happens at a later second than the last sync.
            h.clock.advance(1_000);
            await perform(h, step);
            if (step.op === 'page') await slow.readPage();
            await follower.follow();
            const catalogue = Object.fromEntries(await h.catalogue('en'));
            expect(Object.fromEntries(follower.articles), JSON.stringify(step)).toEqual(catalogue);
          }
          await slow.follow();
          expect(Object.fromEntries(slow.articles)).toEqual(Object.fromEntries(await h.catalogue('en')));
          expect(new Set(slow.received).size).toBe(slow.received.length);
          // Read from the beginning, the feed is the catalogue plus retained deletes.
          const fresh = new Mirror(h, 'en', 4);
          await fresh.follow();
          expect(Object.fromEntries(fresh.articles)).toEqual(Object.fromEntries(await h.catalogue('en')));
        } finally {
          await h.close();
        }
      }),
      { numRuns: 20 },
    );
  }, 180_000);
});
