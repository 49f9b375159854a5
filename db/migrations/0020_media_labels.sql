ALTER TABLE "media_objects" ADD COLUMN "labels" jsonb DEFAULT '{"tags":[],"categories":[]}'::jsonb NOT NULL;--> statement-breakpoint
-- Existing objects get their labels as writeObjectLabels (domain/labels/object-labels.ts) writes them.
UPDATE "media_objects" o SET "labels" = jsonb_build_object(
  'tags', coalesce((SELECT jsonb_agg(jsonb_build_object('id', t.id, 'name', t.name, 'slug', t.slug) ORDER BY t.slug)
    FROM "object_tags" ot JOIN "tags" t ON t.id = ot.tag_id WHERE ot.object_id = o.id), '[]'::jsonb),
  'categories', coalesce((SELECT jsonb_agg(jsonb_build_object('id', c.id, 'name', c.name, 'slug', c.slug) ORDER BY c.slug)
    FROM "object_categories" oc JOIN "categories" c ON c.id = oc.category_id WHERE oc.object_id = o.id), '[]'::jsonb))
WHERE EXISTS (SELECT 1 FROM "object_tags" ot WHERE ot.object_id = o.id)
   OR EXISTS (SELECT 1 FROM "object_categories" oc WHERE oc.object_id = o.id);
