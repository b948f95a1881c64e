CREATE TABLE `search_common_lists` (
	`word` text NOT NULL,
	`field` text NOT NULL,
	`docs` integer NOT NULL,
	`encoding` text NOT NULL,
	`ids` blob NOT NULL,
	PRIMARY KEY(`word`, `field`)
);
--> statement-breakpoint
CREATE TABLE `search_common_lists_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`fresh` integer NOT NULL
);
--> statement-breakpoint
-- Empty and not fresh: the next sync computes the lists; until then searches read the index.
INSERT INTO `search_common_lists_state` (`id`, `fresh`) VALUES (1, 0);
--> statement-breakpoint
-- Any write that can change the index's text clears `fresh`, whoever makes it: a manual fix
-- with SQL or another tool keeps the index but not the lists, and searches must not trust them.
-- The WHEN makes it one write per transaction, not one per row.
CREATE TRIGGER `articles_insert_stales_common_lists` AFTER INSERT ON `articles`
WHEN (SELECT `fresh` FROM `search_common_lists_state` WHERE `id` = 1)
BEGIN UPDATE `search_common_lists_state` SET `fresh` = 0 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `articles_update_stales_common_lists` AFTER UPDATE OF `title`, `excerpt`, `body`, `author`, `section_slug` ON `articles`
WHEN (SELECT `fresh` FROM `search_common_lists_state` WHERE `id` = 1)
BEGIN UPDATE `search_common_lists_state` SET `fresh` = 0 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `articles_delete_stales_common_lists` AFTER DELETE ON `articles`
WHEN (SELECT `fresh` FROM `search_common_lists_state` WHERE `id` = 1)
BEGIN UPDATE `search_common_lists_state` SET `fresh` = 0 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `sections_rename_stales_common_lists` AFTER UPDATE OF `name` ON `sections`
WHEN (SELECT `fresh` FROM `search_common_lists_state` WHERE `id` = 1)
BEGIN UPDATE `search_common_lists_state` SET `fresh` = 0 WHERE `id` = 1; END;
