CREATE TABLE "media_imports" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket_id" uuid NOT NULL,
	"key" text NOT NULL,
	"url" text NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"declared_size" bigint,
	"declared_content_type" text,
	"bytes_received" bigint DEFAULT 0 NOT NULL,
	"total_bytes" bigint,
	"content_type" text,
	"object_id" uuid,
	"error" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "media_imports" ADD CONSTRAINT "media_imports_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_imports" ADD CONSTRAINT "media_imports_bucket_id_buckets_id_fk" FOREIGN KEY ("bucket_id") REFERENCES "public"."buckets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "media_imports_org_idx" ON "media_imports" USING btree ("org_id","created_at");