CREATE TABLE "multipart_uploads" (
	"org_id" uuid NOT NULL,
	"bucket_id" uuid NOT NULL,
	"key" text NOT NULL,
	"upload_id" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "multipart_uploads_org_id_upload_id_pk" PRIMARY KEY("org_id","upload_id")
);
--> statement-breakpoint
ALTER TABLE "multipart_uploads" ADD CONSTRAINT "multipart_uploads_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "multipart_uploads" ADD CONSTRAINT "multipart_uploads_bucket_id_buckets_id_fk" FOREIGN KEY ("bucket_id") REFERENCES "public"."buckets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "multipart_uploads_created_idx" ON "multipart_uploads" USING btree ("org_id","created_at");