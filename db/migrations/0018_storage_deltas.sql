CREATE TABLE "storage_deltas" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "storage_deltas_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"org_id" uuid NOT NULL,
	"bucket_id" uuid NOT NULL,
	"used_storage" bigint DEFAULT 0 NOT NULL,
	"reserved_storage" bigint DEFAULT 0 NOT NULL,
	"object_count" integer DEFAULT 0 NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "storage_deltas" ADD CONSTRAINT "storage_deltas_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "storage_deltas_org_idx" ON "storage_deltas" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "storage_deltas_bucket_idx" ON "storage_deltas" USING btree ("bucket_id");