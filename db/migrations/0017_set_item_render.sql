ALTER TABLE "media_set_items" ADD COLUMN "rendered_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "media_set_items" ADD COLUMN "render_error" text;