CREATE TABLE "media_settings" (
	"org_id" uuid PRIMARY KEY NOT NULL,
	"strip_location" boolean DEFAULT true NOT NULL,
	"render_secret" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "object_facts" (
	"object_id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"source_etag" text,
	"sha256" text,
	"taken_at" timestamp with time zone,
	"width" integer,
	"height" integer,
	"duration" double precision
);
--> statement-breakpoint
ALTER TABLE "media_settings" ADD CONSTRAINT "media_settings_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "object_facts" ADD CONSTRAINT "object_facts_object_id_media_objects_id_fk" FOREIGN KEY ("object_id") REFERENCES "public"."media_objects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "object_facts" ADD CONSTRAINT "object_facts_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "object_facts_org_sha256_idx" ON "object_facts" USING btree ("org_id","sha256");--> statement-breakpoint
CREATE INDEX "object_facts_org_taken_idx" ON "object_facts" USING btree ("org_id","taken_at");--> statement-breakpoint
CREATE INDEX "object_facts_org_width_idx" ON "object_facts" USING btree ("org_id","width");--> statement-breakpoint
CREATE INDEX "object_facts_org_duration_idx" ON "object_facts" USING btree ("org_id","duration");