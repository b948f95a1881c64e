-- Full-text index of exposed-or-not articles, kept by the worker in the same transaction as
-- the articles table. Contentless (the text lives in `articles`), rowid = articles.id.
-- The worker inserts text already split into words (Chinese segmented with Intl.Segmenter),
-- so unicode61 only has to split on spaces and punctuation.
CREATE VIRTUAL TABLE `articles_fts` USING fts5(
	title, excerpt, body, section_name, author,
	content = '',
	contentless_delete = 1,
	tokenize = 'unicode61 remove_diacritics 2',
	prefix = '2 3'
);
