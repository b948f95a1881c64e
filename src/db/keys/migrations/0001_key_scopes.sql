CREATE TABLE `key_scope_changes` (
	`key_id` integer NOT NULL,
	`version` integer NOT NULL,
	`locales` text,
	`sections` text,
	`changed_at` text NOT NULL,
	PRIMARY KEY(`key_id`, `version`)
);
--> statement-breakpoint
ALTER TABLE `api_keys` ADD `scope_locales` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `scope_sections` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `scope_version` integer DEFAULT 0 NOT NULL;