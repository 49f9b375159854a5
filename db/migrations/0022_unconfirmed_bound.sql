ALTER TABLE "upload_reservations" ADD COLUMN "bound" bigint;--> statement-breakpoint
ALTER TABLE "upload_reservations" ADD COLUMN "parts" jsonb;--> statement-breakpoint
CREATE INDEX "upload_reservations_org_idx" ON "upload_reservations" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "upload_reservations_unsized_idx" ON "upload_reservations" USING btree ("org_id") WHERE "upload_reservations"."bound" > "upload_reservations"."bytes";