CREATE TABLE `api_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`partner` text NOT NULL,
	`prefix` text NOT NULL,
	`hash` text NOT NULL,
	`created_at` text NOT NULL,
	`revoked_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_unique` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE TABLE `articles` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`locale` text NOT NULL,
	`cms_id` text NOT NULL,
	`slug` text NOT NULL,
	`status` text NOT NULL,
	`title` text NOT NULL,
	`excerpt` text NOT NULL,
	`body` text NOT NULL,
	`section_slug` text,
	`author` text NOT NULL,
	`image_url` text,
	`image_alt` text,
	`image_credit` text,
	`image_credit_url` text,
	`image_source_url` text,
	`published_at` text,
	`updated_at` text NOT NULL,
	`url` text NOT NULL,
	`content_hash` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `articles_locale_cms_id` ON `articles` (`locale`,`cms_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `articles_locale_slug` ON `articles` (`locale`,`slug`);--> statement-breakpoint
CREATE INDEX `articles_locale_published` ON `articles` (`locale`,"published_at" DESC,`slug`);--> statement-breakpoint
CREATE TABLE `sections` (
	`locale` text NOT NULL,
	`slug` text NOT NULL,
	`cms_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`active` integer NOT NULL,
	`position` integer NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`locale`, `slug`)
);
--> statement-breakpoint
CREATE TABLE `snapshot_state` (
	`locale` text PRIMARY KEY NOT NULL,
	`synced_at` text NOT NULL,
	`changed_at` text NOT NULL,
	`version` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `sync_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`started_at` text NOT NULL,
	`finished_at` text,
	`fetched` integer DEFAULT 0 NOT NULL,
	`upserted` integer DEFAULT 0 NOT NULL,
	`removed` integer DEFAULT 0 NOT NULL,
	`rejected` integer DEFAULT 0 NOT NULL,
	`error` text,
	`pid` integer NOT NULL,
	`host` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sync_runs_started` ON `sync_runs` (`started_at`);--> statement-breakpoint
CREATE TABLE `worker_state` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` text NOT NULL
);
