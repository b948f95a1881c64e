CREATE TABLE `key_usage` (
	`key_id` integer NOT NULL,
	`day` text NOT NULL,
	`articles` integer DEFAULT 0 NOT NULL,
	`article` integer DEFAULT 0 NOT NULL,
	`categories` integer DEFAULT 0 NOT NULL,
	`search` integer DEFAULT 0 NOT NULL,
	`changes` integer DEFAULT 0 NOT NULL,
	`not_modified` integer DEFAULT 0 NOT NULL,
	`client_errors` integer DEFAULT 0 NOT NULL,
	`server_errors` integer DEFAULT 0 NOT NULL,
	`distinct_articles` integer,
	PRIMARY KEY(`key_id`, `day`)
);
--> statement-breakpoint
CREATE TABLE `key_usage_articles` (
	`day` text NOT NULL,
	`key_id` integer NOT NULL,
	`locale` text NOT NULL,
	`slug` text NOT NULL,
	PRIMARY KEY(`day`, `key_id`, `locale`, `slug`)
);
