-- The rows are rebuilt with the new columns below; searches see the old rows until commit.
DELETE FROM "media_search";--> statement-breakpoint
ALTER TABLE "media_search" ADD COLUMN "bucket_id" uuid NOT NULL;--> statement-breakpoint
ALTER TABLE "media_search" ADD COLUMN "kind" text NOT NULL;--> statement-breakpoint
ALTER TABLE "media_search" ADD COLUMN "size" bigint NOT NULL;--> statement-breakpoint
ALTER TABLE "media_search" ADD COLUMN "created_at" timestamp with time zone NOT NULL;--> statement-breakpoint
ALTER TABLE "media_search" ADD COLUMN "tag_ids" uuid[] DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE "media_search" ADD COLUMN "category_ids" uuid[] DEFAULT '{}' NOT NULL;--> statement-breakpoint
INSERT INTO "media_search" ("object_id", "org_id", "bucket_id", "kind", "size", "created_at", "tag_ids", "category_ids", "key", "labels", "meta")
SELECT o."id", o."org_id", o."bucket_id", o."kind", o."size", o."created_at",
  coalesce((SELECT array_agg(ot."tag_id") FROM "object_tags" ot WHERE ot."object_id" = o."id"), '{}'),
  coalesce((SELECT array_agg(oc."category_id") FROM "object_categories" oc WHERE oc."object_id" = o."id"), '{}'),
  o."key",
  coalesce((SELECT string_agg(t."name", ' ') FROM "object_tags" ot JOIN "tags" t ON t."id" = ot."tag_id" WHERE ot."object_id" = o."id"), '') || ' ' ||
  coalesce((SELECT string_agg(c."name", ' ') FROM "object_categories" oc JOIN "categories" c ON c."id" = oc."category_id" WHERE oc."object_id" = o."id"), ''),
  coalesce((SELECT string_agg(e.value, ' ') FROM jsonb_each_text(o."metadata") e), '')
FROM "media_objects" o WHERE o."deleted_at" IS NULL;
