-- The partner ordering index now covers what the visibility index reads (exposureOrdering),
-- so building it reads the index alone. It replaces articles_locale_published (its prefix).
DROP INDEX `articles_locale_published`;--> statement-breakpoint
CREATE INDEX `articles_exposure` ON `articles` (`locale`,"published_at" DESC,`slug`,`status`,`section_slug`,`updated_at`);