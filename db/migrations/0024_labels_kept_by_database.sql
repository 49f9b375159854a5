-- media_objects.labels (0020) is kept current by the database, not by the code that changes
-- links: a release from before 0020, still serving during a rolling upgrade, writes object_tags
-- and object_categories without knowing the column, and every later release gets it right
-- whatever it forgets. media_object_labels is the one definition of what the column holds (a
-- view's tags and categories, each ordered by slug); the triggers, this backfill and reconcile
-- all use it.
CREATE OR REPLACE FUNCTION "media_object_labels"(of_object uuid) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'tags', coalesce((SELECT jsonb_agg(jsonb_build_object('id', t.id, 'name', t.name, 'slug', t.slug) ORDER BY t.slug)
      FROM object_tags ot JOIN tags t ON t.id = ot.tag_id WHERE ot.object_id = of_object), '[]'::jsonb),
    'categories', coalesce((SELECT jsonb_agg(jsonb_build_object('id', c.id, 'name', c.name, 'slug', c.slug) ORDER BY c.slug)
      FROM object_categories oc JOIN categories c ON c.id = oc.category_id WHERE oc.object_id = of_object), '[]'::jsonb))
$$;--> statement-breakpoint
-- The objects are locked first, in id order, and their labels read by the next statement: it
-- takes a snapshot of its own, after any transaction that held one of them has committed, so
-- two transactions changing one object's links cannot each write labels without the other's.
-- Unchanged labels are not rewritten (an upload's tag upsert touches tags it does not change).
-- Answers how many objects' labels changed (reconcile's repair counts them).
CREATE OR REPLACE FUNCTION "relabel_media_objects"(ids uuid[]) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  changed integer;
BEGIN
  IF cardinality(ids) = 0 THEN RETURN 0; END IF;
  PERFORM 1 FROM media_objects WHERE id = ANY(ids) ORDER BY id FOR UPDATE;
  UPDATE media_objects o SET labels = media_object_labels(o.id)
   WHERE o.id = ANY(ids) AND o.labels IS DISTINCT FROM media_object_labels(o.id);
  GET DIAGNOSTICS changed = ROW_COUNT;
  RETURN changed;
END $$;--> statement-breakpoint
-- Statement triggers over the rows a statement changed (transition table "changed"): one
-- rewrite per object, however many of its links the statement touched.
CREATE OR REPLACE FUNCTION "relabel_changed_links"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM relabel_media_objects(ARRAY(SELECT DISTINCT object_id FROM changed));
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "relabel_moved_links"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM relabel_media_objects(ARRAY(SELECT object_id FROM changed UNION SELECT object_id FROM changed_to));
  RETURN NULL;
END $$;--> statement-breakpoint
-- A renamed tag or category changes the view of every object carrying it.
CREATE OR REPLACE FUNCTION "relabel_objects_of_label"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'tags' THEN
    PERFORM relabel_media_objects(ARRAY(SELECT object_id FROM object_tags WHERE tag_id = NEW.id));
  ELSE
    PERFORM relabel_media_objects(ARRAY(SELECT object_id FROM object_categories WHERE category_id = NEW.id));
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "object_tags_relabel_insert" AFTER INSERT ON "object_tags" REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION relabel_changed_links();--> statement-breakpoint
CREATE TRIGGER "object_tags_relabel_delete" AFTER DELETE ON "object_tags" REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION relabel_changed_links();--> statement-breakpoint
CREATE TRIGGER "object_tags_relabel_update" AFTER UPDATE ON "object_tags" REFERENCING OLD TABLE AS changed NEW TABLE AS changed_to FOR EACH STATEMENT EXECUTE FUNCTION relabel_moved_links();--> statement-breakpoint
CREATE TRIGGER "object_categories_relabel_insert" AFTER INSERT ON "object_categories" REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION relabel_changed_links();--> statement-breakpoint
CREATE TRIGGER "object_categories_relabel_delete" AFTER DELETE ON "object_categories" REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION relabel_changed_links();--> statement-breakpoint
CREATE TRIGGER "object_categories_relabel_update" AFTER UPDATE ON "object_categories" REFERENCING OLD TABLE AS changed NEW TABLE AS changed_to FOR EACH STATEMENT EXECUTE FUNCTION relabel_moved_links();--> statement-breakpoint
CREATE TRIGGER "tags_relabel" AFTER UPDATE ON "tags" FOR EACH ROW
  WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.slug IS DISTINCT FROM NEW.slug) EXECUTE FUNCTION relabel_objects_of_label();--> statement-breakpoint
CREATE TRIGGER "categories_relabel" AFTER UPDATE ON "categories" FOR EACH ROW
  WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.slug IS DISTINCT FROM NEW.slug) EXECUTE FUNCTION relabel_objects_of_label();--> statement-breakpoint
-- Rows an older instance left stale before the triggers existed. The triggers hold writes to
-- the link tables until this commits, so nothing can go stale between the two.
UPDATE "media_objects" o SET "labels" = media_object_labels(o.id)
 WHERE (o.id IN (SELECT object_id FROM object_tags UNION SELECT object_id FROM object_categories)
        OR o.labels <> '{"tags":[],"categories":[]}'::jsonb)
   AND o.labels IS DISTINCT FROM media_object_labels(o.id);
