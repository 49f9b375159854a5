-- What a cached search answer must be checked against (domain/search/answer-cache.ts): one row
-- per statement that changed an organization's searchable rows, written by the database itself,
-- so every writer counts (this release, the previous one during a rolling upgrade, the worker,
-- cascades, hand-run SQL) and every instance sharing the database sees it. A cached answer
-- remembers the snapshot it was read under; it is served again only while no row here of its
-- organization was committed outside that snapshot. Rows are only inserted, never updated, so
-- concurrent writers of one organization never wait on each other; searches delete the ones no
-- cached answer can still need.
-- safe with the previous release: a new table and triggers that only add rows to it.
CREATE TABLE "search_changes" (
  "org_id" uuid NOT NULL,
  "xid" xid8 NOT NULL DEFAULT pg_current_xact_id()
);--> statement-breakpoint
CREATE INDEX "search_changes_org_xid_idx" ON "search_changes" ("org_id", "xid");--> statement-breakpoint
CREATE OR REPLACE FUNCTION "search_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_changes (org_id) SELECT DISTINCT org_id FROM changed;
  RETURN NULL;
END $$;--> statement-breakpoint
-- media_search holds what a search matches, ranks, counts and filters; media_text the pages a
-- match's snippet is cut from; tags and categories the names the facets show.
CREATE TRIGGER "media_search_changed_insert" AFTER INSERT ON "media_search" REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION search_changed();--> statement-breakpoint
CREATE TRIGGER "media_search_changed_update" AFTER UPDATE ON "media_search" REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION search_changed();--> statement-breakpoint
CREATE TRIGGER "media_search_changed_delete" AFTER DELETE ON "media_search" REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION search_changed();--> statement-breakpoint
CREATE TRIGGER "media_text_changed_insert" AFTER INSERT ON "media_text" REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION search_changed();--> statement-breakpoint
CREATE TRIGGER "media_text_changed_update" AFTER UPDATE ON "media_text" REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION search_changed();--> statement-breakpoint
CREATE TRIGGER "media_text_changed_delete" AFTER DELETE ON "media_text" REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION search_changed();--> statement-breakpoint
CREATE TRIGGER "tags_search_changed_update" AFTER UPDATE ON "tags" REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION search_changed();--> statement-breakpoint
CREATE TRIGGER "tags_search_changed_delete" AFTER DELETE ON "tags" REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION search_changed();--> statement-breakpoint
CREATE TRIGGER "categories_search_changed_update" AFTER UPDATE ON "categories" REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION search_changed();--> statement-breakpoint
CREATE TRIGGER "categories_search_changed_delete" AFTER DELETE ON "categories" REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION search_changed();
