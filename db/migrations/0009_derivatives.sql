CREATE TABLE "derivatives" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"object_id" uuid NOT NULL,
	"variant" text NOT NULL,
	"state" text NOT NULL,
	"source_etag" text,
	"storage_key" text,
	"content_type" text,
	"size" bigint,
	"width" integer,
	"height" integer,
	"etag" text,
	"error" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "job_outbox_pending_idx";--> statement-breakpoint
ALTER TABLE "job_outbox" ADD COLUMN "done_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "job_outbox" ADD COLUMN "error" text;--> statement-breakpoint
-- Rows dispatched before this migration were handed over for good: close them, so the
-- in-process queue does not mistake them for claims of a dead process and run them again.
UPDATE "job_outbox" SET "done_at" = "dispatched_at" WHERE "dispatched_at" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "derivatives" ADD CONSTRAINT "derivatives_object_id_media_objects_id_fk" FOREIGN KEY ("object_id") REFERENCES "public"."media_objects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "derivatives_object_variant_uq" ON "derivatives" USING btree ("object_id","variant");--> statement-breakpoint
CREATE INDEX "job_outbox_open_idx" ON "job_outbox" USING btree ("run_after") WHERE "job_outbox"."done_at" is null;