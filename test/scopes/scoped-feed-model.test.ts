import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { setKeyScope } from '../../src/keys/manage.js';
import { addKey, withKeys } from '../support/api.js';
import { article, section, startFeedHarness, type FeedHarness } from '../support/feed-harness.js';
import { KeyMirror, listed, type Keyed } from './scope-support.js';

/*
 * The contract's promise for scoped keys, over generated histories: whatever the CMS does,
 * whichever sync runs and however an editor changes a key's sections in between, a mirror kept
 * from that key's feed equals what the key's list shows, after every step; so does a slow
 * reader that reads one page per step across all of it (its cursors cross scope changes, and
 * scope changes land in the middle of its reads), a reader from the beginning, and a key
 * created after the changes. The unscoped key beside them keeps the whole catalogue.
 */

const IDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g'] as const;
const SECTIONS = ['news', 'old', 'tech'] as const;
type SectionSlug = (typeof SECTIONS)[number];
const id = fc.constantFrom(...IDS);
const sectionSlug = fc.constantFrom(...SECTIONS);

type Op =
  | { op: 'publish'; id: string; section: SectionSlug; inMinutes: number }
  | { op: 'move'; id: string; section: SectionSlug }
  | { op: 'edit'; id: string }
  | { op: 'unpublish'; id: string }
  | { op: 'delete'; id: string }
  | { op: 'republish'; id: string }
  | { op: 'sectionActive'; active: boolean }
  | { op: 'time'; minutes: number }
  | { op: 'sync'; kind: 'full' | 'incremental' | 'auto' }
  | { op: 'scope'; sections: SectionSlug[] | null }
  | { op: 'page' }
  | { op: 'newKey' };

const ops: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('publish' as const), id, section: sectionSlug, inMinutes: fc.constantFrom(-30, 0, 5) }),
  fc.record({ op: fc.constant('move' as const), id, section: sectionSlug }),
  fc.record({ op: fc.constant('edit' as const), id }),
  fc.record({ op: fc.constant('unpublish' as const), id }),
  fc.record({ op: fc.constant('delete' as const), id }),
  fc.record({ op: fc.constant('republish' as const), id }),
  fc.record({ op: fc.constant('sectionActive' as const), active: fc.boolean() }),
  fc.record({ op: fc.constant('time' as const), minutes: fc.constantFrom(1, 10, 60) }),
  { arbitrary: fc.record({ op: fc.constant('sync' as const), kind: fc.constantFrom('full' as const, 'incremental' as const, 'auto' as const) }), weight: 4 },
  {
    arbitrary: fc.record({
      op: fc.constant('scope' as const),
      sections: fc.option(fc.uniqueArray(sectionSlug, { minLength: 1, maxLength: 2 }), { nil: null, freq: 4 }),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ op: fc.constant('page' as const) }), weight: 3 },
  fc.record({ op: fc.constant('newKey' as const) }),
);

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function perform(h: FeedHarness, step: Op, scopedId: number): Promise<unknown> | undefined {
  const store = h.cms.store;
  const stamp = h.nowIso();
  const current = 'id' in step ? store.getArticle(step.id) : undefined;
  switch (step.op) {
    case 'publish':
      store.upsertArticle(
        article(step.id, { section_slug: step.section, published_at: iso(h.clock() + step.inMinutes * 60_000), updated_at: stamp }),
      );
      return;
    case 'move':
      if (current) store.upsertArticle({ ...current, section_slug: step.section, updated_at: stamp });
      return;
    case 'edit':
      if (current) store.upsertArticle({ ...current, title: `${current.title}'`, updated_at: stamp });
      return;
    case 'unpublish':
      if (current) store.upsertArticle({ ...current, status: 'draft', updated_at: stamp });
      return;
    case 'republish':
      if (current) store.upsertArticle({ ...current, status: 'published', updated_at: stamp });
      return;
    case 'delete':
      store.removeArticle(step.id);
      return;
    case 'sectionActive':
      store.upsertSection('en', section('old', { position: 2, active: step.active, updated_at: stamp }));
      return;
    case 'time':
      h.clock.advance(step.minutes * 60_000);
      return;
    case 'sync':
      return h.sync(step.kind);
    case 'scope':
      withKeys(h.databasePath, (db) => setKeyScope(db, scopedId, { sections: step.sections }, () => Date.now()));
      return;
    case 'page':
    case 'newKey':
      return undefined;
  }
}

const asObject = (m: Map<string, unknown>) => Object.fromEntries([...m].sort(([a], [b]) => a.localeCompare(b)));

describe('the change feed of a scoped key over generated histories of syncs and scope changes', () => {
  it('every mirror kept from a scoped feed equals what the key lists, after every step', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(ops, { minLength: 4, maxLength: 16 }), async (steps) => {
        const h = await startFeedHarness();
        try {
          h.cms.store.upsertSection('en', section('news'));
          h.cms.store.upsertSection('en', section('old', { position: 2 }));
          h.cms.store.upsertSection('en', section('tech', { position: 3 }));
          h.cms.store.upsertArticle(article('a', { updated_at: h.nowIso() }));
          h.cms.store.upsertArticle(article('b', { updated_at: h.nowIso(), section_slug: 'old' }));
          h.cms.store.upsertArticle(article('c', { updated_at: h.nowIso(), section_slug: 'tech' }));
          h.cms.store.upsertArticle(article('d', { updated_at: h.nowIso(), section_slug: 'tech', published_at: iso(h.clock() + 120_000) }));
          await h.sync('full');
          const url = h.api.url;
          const scoped = addKey(h.databasePath, 'Scoped Partner', { sections: ['news', 'tech'] });
          const k: Keyed = { url, key: scoped.key };
          const unscoped: Keyed = { url, key: h.key };
          const follower = new KeyMirror(k, 'en', 3);
          const slow = new KeyMirror(k, 'en', 2);
          const whole = new KeyMirror(unscoped, 'en', 4);
          const late: KeyMirror[] = [];
          const lateKeys: Keyed[] = [];
          for (const step of steps) {
            h.clock.advance(1_000);
            await perform(h, step, scoped.id);
            if (step.op === 'page') await slow.readPage();
            if (step.op === 'newKey') {
              const sections = withKeys(h.databasePath, (db) => db.$client.prepare('SELECT scope_sections FROM api_keys WHERE id = ?').pluck().get(scoped.id)) as string | null;
              const created = addKey(h.databasePath, 'Late Partner', sections === null ? {} : { sections: sections.split(',') });
              // A key created after scope changes, with the scope the scoped key has now.
              lateKeys.push({ url, key: created.key });
              late.push(new KeyMirror({ url, key: created.key }, 'en', 2));
            }
            await follower.follow();
            expect(asObject(follower.articles), JSON.stringify(step)).toEqual(asObject(await listed(k, 'en')));
            await whole.follow();
            expect(asObject(whole.articles), JSON.stringify(step)).toEqual(asObject(await listed(unscoped, 'en')));
          }
          await slow.follow();
          expect(asObject(slow.articles)).toEqual(asObject(await listed(k, 'en')));
          const fresh = new KeyMirror(k, 'en', 2);
          await fresh.follow();
          expect(asObject(fresh.articles)).toEqual(asObject(await listed(k, 'en')));
          for (const [i, mirror] of late.entries()) {
            await mirror.follow();
            expect(asObject(mirror.articles)).toEqual(asObject(await listed(lateKeys[i]!, 'en')));
          }
        } finally {
          await h.close();
        }
      }),
      { numRuns: 25 },
    );
  }, 300_000);
});
