-- Key search (GET /api/media?search=) is always within one organization: the trigram index over
-- (org_id, key) hands over only that organization's candidates. The key-only index handed over
-- every organization's, which the search then read from the table and dropped.
DROP INDEX "media_key_trgm_idx";--> statement-breakpoint
CREATE INDEX "media_org_key_trgm_idx" ON "media_objects" USING gin ("org_id","key" gin_trgm_ops);
