CREATE TABLE "media_search" (
	"object_id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"key" text NOT NULL,
	"labels" text DEFAULT '' NOT NULL,
	"meta" text DEFAULT '' NOT NULL,
	"vector" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, regexp_replace(key, '[/._\-]+', ' ', 'g')), 'A') || setweight(to_tsvector('simple'::regconfig, regexp_replace(labels, '[/._\-]+', ' ', 'g')), 'B') || setweight(to_tsvector('simple'::regconfig, regexp_replace(meta, '[/._\-]+', ' ', 'g')), 'C')) STORED NOT NULL
);
--> statement-breakpoint
ALTER TABLE "media_search" ADD CONSTRAINT "media_search_object_id_media_objects_id_fk" FOREIGN KEY ("object_id") REFERENCES "public"."media_objects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_search" ADD CONSTRAINT "media_search_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "media_search_vector_idx" ON "media_search" USING gin ("vector");--> statement-breakpoint
CREATE INDEX "media_search_org_idx" ON "media_search" USING btree ("org_id");--> statement-breakpoint
-- Objects that existed before search get their searchable text now.
INSERT INTO "media_search" ("object_id", "org_id", "key", "labels", "meta")
SELECT o."id", o."org_id", o."key",
  coalesce((SELECT string_agg(t."name", ' ') FROM "object_tags" ot JOIN "tags" t ON t."id" = ot."tag_id" WHERE ot."object_id" = o."id"), '') || ' ' ||
  coalesce((SELECT string_agg(c."name", ' ') FROM "object_categories" oc JOIN "categories" c ON c."id" = oc."category_id" WHERE oc."object_id" = o."id"), ''),
  coalesce((SELECT string_agg(e.value, ' ') FROM jsonb_each_text(o."metadata") e), '')
FROM "media_objects" o;
