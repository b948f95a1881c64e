CREATE TABLE `feed_entries` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`locale` text NOT NULL,
	`slug` text NOT NULL,
	`effective_ms` integer NOT NULL,
	`kind` text NOT NULL,
	`fingerprint` text
);
--> statement-breakpoint
CREATE INDEX `feed_entries_locale_position` ON `feed_entries` (`locale`,`effective_ms`,`seq`);--> statement-breakpoint
CREATE INDEX `feed_entries_locale_slug` ON `feed_entries` (`locale`,`slug`,`effective_ms`);--> statement-breakpoint
CREATE INDEX `feed_entries_locale_seq` ON `feed_entries` (`locale`,`seq`);--> statement-breakpoint
CREATE INDEX `feed_entries_kind_effective` ON `feed_entries` (`kind`,`effective_ms`);--> statement-breakpoint
CREATE TABLE `feed_state` (
	`locale` text PRIMARY KEY NOT NULL,
	`epoch` text NOT NULL,
	`pending_ms` integer,
	`pruned_ms` integer DEFAULT 0 NOT NULL,
	`pruned_seq` integer DEFAULT 0 NOT NULL
);
