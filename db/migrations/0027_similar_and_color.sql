ALTER TABLE "object_facts" ADD COLUMN "phash" bigint;--> statement-breakpoint
ALTER TABLE "object_facts" ADD COLUMN "phash0" integer;--> statement-breakpoint
ALTER TABLE "object_facts" ADD COLUMN "phash1" integer;--> statement-breakpoint
ALTER TABLE "object_facts" ADD COLUMN "phash2" integer;--> statement-breakpoint
ALTER TABLE "object_facts" ADD COLUMN "phash3" integer;--> statement-breakpoint
ALTER TABLE "object_facts" ADD COLUMN "color_l" real;--> statement-breakpoint
ALTER TABLE "object_facts" ADD COLUMN "color_a" real;--> statement-breakpoint
ALTER TABLE "object_facts" ADD COLUMN "color_b" real;--> statement-breakpoint
CREATE INDEX "object_facts_org_phash0_idx" ON "object_facts" USING btree ("org_id","phash0") WHERE "object_facts"."phash0" is not null;--> statement-breakpoint
CREATE INDEX "object_facts_org_phash1_idx" ON "object_facts" USING btree ("org_id","phash1") WHERE "object_facts"."phash1" is not null;--> statement-breakpoint
CREATE INDEX "object_facts_org_phash2_idx" ON "object_facts" USING btree ("org_id","phash2") WHERE "object_facts"."phash2" is not null;--> statement-breakpoint
CREATE INDEX "object_facts_org_phash3_idx" ON "object_facts" USING btree ("org_id","phash3") WHERE "object_facts"."phash3" is not null;--> statement-breakpoint
CREATE INDEX "object_facts_org_color_idx" ON "object_facts" USING btree ("org_id","color_a","color_b","color_l") WHERE "object_facts"."color_l" is not null;