-- Full text is always searched within one organization: one GIN index over (org_id, vector)
-- answers both conditions, where the vector index alone visited every organization's postings
-- of a term and the search then combined them with a bitmap of the organization's rows.
CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
CREATE INDEX "media_search_org_vector_idx" ON "media_search" USING gin ("org_id","vector");--> statement-breakpoint
DROP INDEX "media_search_vector_idx";
