import Database from 'better-sqlite3';
const db = new Database('/tmp/search-bench/bench.db', { readonly: true });
const W = '10.0, 4.0, 1.0, 2.0, 2.0';
const t = (label, fn) => { fn(); const t0 = performance.now(); const r = fn(); console.log(label.padEnd(50), (performance.now() - t0).toFixed(1), 'ms', typeof r === 'number' ? r : ''); return r; };
const max = db.prepare('select max(id) from articles').pluck().get();
const bitmap = new Uint8Array(max + 1); for (const id of db.prepare("select id from articles where locale='en' and status='published'").pluck().all()) bitmap[id] = 1;
let acc = 0;
db.function('exposed', { deterministic: false }, (id) => bitmap[id]);
db.aggregate('cnt', { start: 0, step: (n, id) => n + bitmap[id] });
for (const m of ['"laser"*', '"beam"* "optics"*', '"production"* "laser"*']) {
  console.log('==', m);
  const ids = t('pluck all', () => db.prepare('SELECT rowid FROM articles_fts WHERE articles_fts MATCH ?').pluck().all(m));
  t('aggregate cnt', () => db.prepare('SELECT cnt(rowid) FROM articles_fts WHERE articles_fts MATCH ?').pluck().get(m));
  t('count where exposed()', () => db.prepare('SELECT count(*) FROM articles_fts WHERE articles_fts MATCH ? AND exposed(rowid)').pluck().get(m));
  t('group_concat', () => db.prepare('SELECT group_concat(rowid) FROM articles_fts WHERE articles_fts MATCH ?').pluck().get(m).length);
  const cand = ids.slice(-2000);
  const json = JSON.stringify(cand);
  t('bm25 rowid IN json_each (2000)', () => db.prepare(`SELECT rowid, bm25(articles_fts, ${W}) FROM articles_fts WHERE articles_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))`).raw().all(m, json).length);
  const one = db.prepare(`SELECT bm25(articles_fts, ${W}) FROM articles_fts WHERE articles_fts MATCH ? AND rowid = ?`).pluck();
  t('bm25 rowid = ? x2000', () => { let s = 0; for (const id of cand) s += one.get(m, id); return cand.length; });
  t('bm25 rowid >= min', () => db.prepare(`SELECT rowid, bm25(articles_fts, ${W}) FROM articles_fts WHERE articles_fts MATCH ? AND rowid >= ?`).raw().all(m, cand[0]).length);
  t('title pluck', () => db.prepare('SELECT rowid FROM articles_fts WHERE articles_fts MATCH ?').pluck().all('{title}: (' + m + ')').length);
}
