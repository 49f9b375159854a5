ALTER TABLE "buckets" ADD COLUMN "object_count" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE "buckets" b SET "object_count" = (SELECT count(*) FROM "media_objects" o WHERE o."bucket_id" = b."id" AND o."deleted_at" IS NULL);
