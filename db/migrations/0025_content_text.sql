-- The words inside an object (media_text) join its search document with the lowest weight (D).
-- A generated column's expression cannot be altered in PostgreSQL 15: the vector is dropped
-- (with its index) and added again over the new body column, which rewrites media_search once.
-- safe with the previous release: it never names body (its rows get the default ''), and the
-- vector it reads and never writes comes back under the same name and type in this same
-- transaction; its searches wait on the table's lock while the rewrite runs.
CREATE TABLE "backfill_runs" (
	"org_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"cursor" uuid,
	"processed" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "backfill_runs_org_id_kind_pk" PRIMARY KEY("org_id","kind")
);
--> statement-breakpoint
CREATE TABLE "media_text" (
	"object_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"source" text NOT NULL,
	"page" integer NOT NULL,
	"text" text NOT NULL,
	"etag" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "media_text_object_id_source_page_pk" PRIMARY KEY("object_id","source","page")
);
--> statement-breakpoint
ALTER TABLE "media_settings" ADD COLUMN "ocr_on_upload" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "media_settings" ADD COLUMN "ocr_languages" text[] DEFAULT '{"eng"}' NOT NULL;--> statement-breakpoint
ALTER TABLE "backfill_runs" ADD CONSTRAINT "backfill_runs_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_text" ADD CONSTRAINT "media_text_object_id_media_objects_id_fk" FOREIGN KEY ("object_id") REFERENCES "public"."media_objects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_text" ADD CONSTRAINT "media_text_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "media_text_org_idx" ON "media_text" USING btree ("org_id");--> statement-breakpoint
ALTER TABLE "media_search" ADD COLUMN "body" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "media_search" drop column "vector";--> statement-breakpoint
ALTER TABLE "media_search" ADD COLUMN "vector" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, regexp_replace(key, '[/._\-]+', ' ', 'g')), 'A') || setweight(to_tsvector('simple'::regconfig, regexp_replace(labels, '[/._\-]+', ' ', 'g')), 'B') || setweight(to_tsvector('simple'::regconfig, regexp_replace(meta, '[/._\-]+', ' ', 'g')), 'C') || setweight(to_tsvector('simple'::regconfig, body), 'D')) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "media_search_org_vector_idx" ON "media_search" USING gin ("org_id","vector");