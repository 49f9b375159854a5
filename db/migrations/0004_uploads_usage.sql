CREATE TABLE "org_usage" (
	"org_id" uuid PRIMARY KEY NOT NULL,
	"used_storage" bigint DEFAULT 0 NOT NULL,
	"reserved_storage" bigint DEFAULT 0 NOT NULL,
	"allocated_storage" bigint NOT NULL,
	"object_count" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "upload_reservations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket_id" uuid NOT NULL,
	"key" text NOT NULL,
	"bytes" bigint DEFAULT 0 NOT NULL,
	"content_type" text NOT NULL,
	"tags" text[] DEFAULT '{}' NOT NULL,
	"upload_id" text,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_monthly" (
	"org_id" uuid NOT NULL,
	"month" date NOT NULL,
	"egress_bytes" bigint DEFAULT 0 NOT NULL,
	"api_calls" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_monthly_org_id_month_pk" PRIMARY KEY("org_id","month")
);
--> statement-breakpoint
ALTER TABLE "media_objects" ADD COLUMN "info" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "media_objects" ADD COLUMN "purge_queued_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "org_usage" ADD CONSTRAINT "org_usage_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "upload_reservations" ADD CONSTRAINT "upload_reservations_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "upload_reservations" ADD CONSTRAINT "upload_reservations_bucket_id_buckets_id_fk" FOREIGN KEY ("bucket_id") REFERENCES "public"."buckets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_monthly" ADD CONSTRAINT "usage_monthly_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "upload_reservations_key_idx" ON "upload_reservations" USING btree ("bucket_id","key");--> statement-breakpoint
CREATE INDEX "upload_reservations_expiry_idx" ON "upload_reservations" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "media_key_trgm_idx" ON "media_objects" USING gin ("key" gin_trgm_ops);