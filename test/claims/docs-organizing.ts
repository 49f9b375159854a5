import { expect } from "bun:test";
import { eq } from "drizzle-orm";
import { mediaObjects, mediaSetItems, storyboardClips } from "../../db/schema/index.ts";
import { MAX_RENDITION_BYTES } from "../../domain/collections/sets.ts";
import { findTool } from "../../tools/registry.ts";
import type { PageClaims } from "./claim.ts";
import { insertObject, newBucket, softDeleteObject } from "../support/objects.ts";
import { newOrg, type TestOrg, type TestServer } from "../support/server.ts";

const ITEMS = "test/integration/sets.test.ts";
const LIMITS = "test/integration/set-limits.test.ts";
const TAGS = "test/integration/tags.test.ts";
const CATEGORIES = "test/integration/categories.test.ts";
const BOARDS = "test/integration/storyboards.test.ts";
const MOVE = "test/e2e/objects-move.test.ts";
const BULK = "test/e2e/objects-bulk.test.ts";
const item = { aspectRatio: "1:1", width: 100, height: 100, role: "square" };

/** An organization with a bucket and one live object in it. */
async function orgWithObject(server: TestServer): Promise<{ org: TestOrg; bucketId: string; objectId: string }> {
  const org = await newOrg(server, "organizing claims");
  const bucketId = (await newBucket(org)).id;
  return { org, bucketId, objectId: (await insertObject(server, org, bucketId)).id };
}

export default {
  page: "docs/organizing.md",
  claims: [
    {
      says: "Lists answer { data, total, hasMore } and take limit (1..200, default 50) and offset (default 0), except the category tree",
      check: async (server) => {
        const { org, objectId } = await orgWithObject(server);
        for (let i = 0; i < 51; i++) {
          expect((await org.admin.post("/api/tags", { name: `page ${i}` })).status).toBe(201);
          expect((await org.admin.post("/api/storyboards", { name: `page ${i}` })).status).toBe(201);
          expect((await org.admin.post("/api/sets", { name: `page ${i}`, baseObjectId: objectId })).status).toBe(201);
        }
        for (const list of ["/api/tags", "/api/sets", "/api/storyboards"]) {
          const first = await org.admin.get(list);
          expect(Object.keys(first.body).sort()).toEqual(["data", "hasMore", "total"]);
          expect([first.body.data.length, first.body.total, first.body.hasMore]).toEqual([50, 51, true]);
          const rest = await org.admin.get(`${list}?offset=50`);
          expect([rest.body.data.length, rest.body.hasMore]).toEqual([1, false]);
          expect((await org.admin.get(`${list}?limit=200`)).body.data).toHaveLength(51);
          for (const q of ["limit=0", "limit=201", "offset=-1"]) expect((await org.admin.get(`${list}?${q}`)).status).toBe(400);
        }
      },
    },
    {
      says: "An id from another organization is answered exactly like an id that does not exist: 404 not_found.",
      check: async (server) => {
        const mine = await orgWithObject(server);
        const theirs = await orgWithObject(server);
        const tag = (await theirs.org.admin.post("/api/tags", { name: "theirs" })).body.id;
        const category = (await theirs.org.admin.post("/api/categories", { name: "theirs" })).body.id;
        const set = (await theirs.org.admin.post("/api/sets", { name: "theirs", baseObjectId: theirs.objectId })).body.id;
        const board = (await theirs.org.admin.post("/api/storyboards", { name: "theirs" })).body.id;
        const answer = async (method: "get" | "delete", path: string) => {
          const res = await mine.org.admin[method](path);
          return [res.status, res.body.error.code, res.body.error.message];
        };
        for (const [method, path, id] of [
          ["delete", "/api/tags/", tag],
          ["delete", "/api/categories/", category],
          ["get", "/api/sets/", set],
          ["get", "/api/storyboards/", board],
        ] as const) {
          const foreign = await answer(method, path + id);
          expect(foreign.slice(0, 2)).toEqual([404, "not_found"]);
          expect(foreign).toEqual(await answer(method, path + crypto.randomUUID()));
        }
      },
    },
    {
      says: "A media object you refer to (to tag it, as a set's base, as an item or a clip) must be a live object of your organization: unknown, foreign and soft-deleted objects are all 404. With a bucket-restricted key, an object that exists in your organization but in another bucket is 403 forbidden.",
      check: async (server) => {
        const { org, bucketId, objectId } = await orgWithObject(server);
        const foreign = await orgWithObject(server);
        const gone = (await insertObject(server, org, bucketId)).id;
        await softDeleteObject(server, gone);
        const tag = (await org.admin.post("/api/tags", { name: "refer" })).body.id;
        const set = (await org.admin.post("/api/sets", { name: "refer", baseObjectId: objectId })).body.id;
        const board = (await org.admin.post("/api/storyboards", { name: "refer" })).body.id;
        const uses = (api: TestOrg["admin"], id: string) => [
          () => api.put(`/api/objects/${id}/tags`, { tagIds: [tag] }),
          () => api.post("/api/sets", { name: "x", baseObjectId: id }),
          () => api.post(`/api/sets/${set}/items`, { ...item, objectId: id }),
          () => api.post(`/api/storyboards/${board}/clips`, { objectId: id }),
        ];
        for (const id of [crypto.randomUUID(), foreign.objectId, gone]) {
          for (const use of uses(org.admin, id)) expect((await use()).status).toBe(404);
        }
        const otherBucket = (await newBucket(org)).id;
        const elsewhere = (await insertObject(server, org, otherBucket)).id;
        const restricted = await org.keyClient(["read", "write"], { bucketId });
        for (const use of uses(restricted, elsewhere)) {
          const res = await use();
          expect([res.status, res.body.error.code]).toEqual([403, "forbidden"]);
        }
      },
    },
    {
      says: "Should the service stop between the steps, the object is where it was, or already where it goes, never half of each; bytes left behind are recorded nowhere and reconcile deletes them.",
      by: { file: MOVE, test: "when the catalogue refuses the change after the copy, the object stays where it was and the copy is taken back" },
    },
    {
      says: "A key another object holds answers 409 conflict (details.objectId names it), unless overwrite: true: the object there goes to the trash, as media_delete would send it, and since that deletes an object, overwrite also needs the delete scope (403 without it).",
      by: { file: MOVE, test: "a taken key is 409 unless overwrite; overwrite puts the replaced object in the trash and needs delete" },
    },
    {
      says: "A key an upload has been presigned for and not confirmed is 409 too, until the upload is confirmed or its URL expires, and so is a key another move is copying to",
      check: async (server) => {
        const { org, bucketId, objectId } = await orgWithObject(server);
        expect((await org.admin.post("/api/presign/upload", { bucketId, key: "pending.bin" })).status).toBe(200);
        const r = await org.admin.post(`/api/media/${objectId}/move`, { key: "pending.bin" });
        expect([r.status, r.body.error.code]).toEqual([409, "conflict"]);
      },
    },
    { says: "of two objects moved to one key at once, one gets it.", by: { file: MOVE, test: "two objects moved to one key at once: one wins, the other is 409" } },
    {
      says: "A bucket-restricted key moves within its bucket only: another bucket is 403, like every bucket outside its reach; another organization's bucket or object is 404.",
      by: { file: MOVE, test: "reach and scopes: a read key is refused, a one-bucket key cannot move out, another organization's ids are 404" },
    },
    {
      says: "They select either ids (up to 1000) or a filter",
      check: async (server) => {
        const { org } = await orgWithObject(server);
        const ids = (n: number) => Array.from({ length: n }, () => crypto.randomUUID());
        expect((await org.admin.post("/api/media/bulk-delete", { ids: ids(1000) })).body).toMatchObject({ done: 0, failed: 1000 });
        expect((await org.admin.post("/api/media/bulk-delete", { ids: ids(1001) })).status).toBe(400);
      },
    },
    {
      says: "limit objects a call (1..1000, default 100)",
      check: async (server) => {
        const { org } = await orgWithObject(server);
        for (const limit of [0, 1001]) expect((await org.admin.post("/api/media/bulk-delete", { filter: {}, limit })).status).toBe(400);
        expect(findTool("objects_bulk_delete")!.input.parse({ filter: {} }).limit).toBe(100);
      },
    },
    {
      says: "the answer's cursor, sent back, goes on where it stopped, and remaining says how many are left",
      by: { file: BULK, test: "a filter is walked with a cursor to its end, even as the change moves its objects out of it" },
    },
    { says: "An unknown category is 404 before anything changes.", by: { file: BULK, test: "an unknown category is 404 before anything changes; no change at all is 400" } },
    { says: "Input that fails its schema is 400 validation_error with details: [{ path, message }]. Unknown fields are refused.", by: { file: TAGS, test: "invalid names are 400 validation_error on name" } },
    {
      says: "| tags_list | GET /api/tags?search= | 200 list |",
      check: async (server) => {
        // Every row of the table, in order, with the status it names.
        const { org, bucketId, objectId } = await orgWithObject(server);
        const api = org.admin;
        const step = async (res: Promise<{ status: number; body: any }>, status: number) => {
          const r = await res;
          expect(r.status).toBe(status);
          return r.body;
        };
        const tag = await step(api.post("/api/tags", { name: "table" }), 201);
        expect((await step(api.get("/api/tags?search=tab", {}), 200)).data.map((t: { id: string }) => t.id)).toEqual([tag.id]);
        await step(api.put(`/api/objects/${objectId}/tags`, { tagIds: [tag.id] }), 200);
        await step(api.delete(`/api/tags/${tag.id}`), 200);
        expect((await step(api.get("/api/categories"), 200)).data).toEqual([]);
        const root = await step(api.post("/api/categories", { name: "root" }), 201);
        const child = await step(api.post("/api/categories", { name: "child", parentId: root.id }), 201);
        expect((await step(api.put(`/api/categories/${child.id}/parent`, { parentId: null }), 200)).parentId).toBeNull();
        await step(api.put(`/api/objects/${objectId}/categories`, { categoryIds: [root.id] }), 200);
        await step(api.delete(`/api/categories/${child.id}`), 200);
        const set = await step(api.post("/api/sets", { name: "table", baseObjectId: objectId }), 201);
        expect((await step(api.get("/api/sets"), 200)).total).toBe(1);
        const added = await step(api.post(`/api/sets/${set.id}/items`, item), 201);
        expect((await step(api.get(`/api/sets/${set.id}`), 200)).items.map((i: { id: string }) => i.id)).toEqual([added.id]);
        await step(api.post(`/api/sets/${set.id}/generate`), 202);
        await step(api.delete(`/api/sets/${set.id}/items/${added.id}`), 200);
        await step(api.delete(`/api/sets/${set.id}`), 200);
        const board = await step(api.post("/api/storyboards", { name: "table", bucketId }), 201);
        expect((await step(api.get("/api/storyboards"), 200)).total).toBe(1);
        const a = await step(api.post(`/api/storyboards/${board.id}/clips`, { objectId }), 201);
        const b = await step(api.post(`/api/storyboards/${board.id}/clips`, { objectId, position: 0, note: "first" }), 201);
        expect((await step(api.get(`/api/storyboards/${board.id}`), 200)).clips.map((c: { id: string }) => c.id)).toEqual([b.id, a.id]);
        expect((await step(api.put(`/api/storyboards/${board.id}/clips/reorder`, { clipIds: [a.id, b.id] }), 200)).clipCount).toBe(2);
        expect((await step(api.put(`/api/storyboards/${board.id}/clips/${a.id}`, { note: "n" }), 200)).note).toBe("n");
        await step(api.delete(`/api/storyboards/${board.id}/clips/${a.id}`), 200);
        await step(api.delete(`/api/storyboards/${board.id}`), 200);
      },
    },
    { says: "| tags_create | POST /api/tags { name } | 201 tag |", by: { file: TAGS, test: "create answers 201 with a slug derived from the name" } },
    { says: "| tags_delete | DELETE /api/tags/{id} | 200 |", by: { file: TAGS, test: "delete removes the tag and its assignments; other organizations get 404" } },
    { says: "| objects_set_tags | PUT /api/objects/{id}/tags { tagIds } | 200 |", by: { file: TAGS, test: "objects_set_tags replaces the whole list (never appends)" } },
    { says: "| categories_list | GET /api/categories | 200 tree |", by: { file: CATEGORIES, test: "the nested tree: roots with children, siblings by name, total counts every node" } },
    { says: "| categories_create | POST /api/categories { name, parentId? } | 201 category |", by: { file: CATEGORIES, test: "create a root and a child: 201 with slug and parentId" } },
    { says: "| categories_move | PUT /api/categories/{id}/parent { parentId } | 200 category |", by: { file: CATEGORIES, test: "a category moves with its subtree; to the root with null" } },
    { says: "| categories_delete | DELETE /api/categories/{id} | 200 |", by: { file: CATEGORIES, test: "deleting a middle node moves its children to the root and removes its assignments" } },
    { says: "| objects_set_categories | PUT /api/objects/{id}/categories { categoryIds } | 200 |", by: { file: CATEGORIES, test: "objects_set_categories replaces; unknown or foreign ids are 404 and change nothing" } },
    { says: "| sets_list | GET /api/sets | 200 list |", by: { file: ITEMS, test: "list: summaries newest first with item counts, paginated, only this organization" } },
    { says: "| sets_create | POST /api/sets { name, baseObjectId } | 201 set |", by: { file: ITEMS, test: "create answers 201 with the set and no items" } },
    { says: "| sets_get | GET /api/sets/{id} | 200 set with items |", by: { file: ITEMS, test: "items: generated (no objectId) and attached; get shows them in order" } },
    { says: "| sets_delete | DELETE /api/sets/{id} | 200 |", by: { file: ITEMS, test: "delete removes the set and its items, keeps the objects" } },
    { says: "| sets_add_item | POST /api/sets/{id}/items { objectId?, aspectRatio, width, height, role } | 201 item |", by: { file: ITEMS, test: "items: generated (no objectId) and attached; get shows them in order" } },
    { says: "| sets_remove_item | DELETE /api/sets/{id}/items/{itemId} | 200 |", by: { file: ITEMS, test: "remove an item; items of other sets and organizations are 404" } },
    { says: "| sets_generate | POST /api/sets/{id}/generate | 202 |", by: { file: ITEMS, test: "generate answers exactly 202 and records a sets.generate job in the outbox" } },
    { says: "| storyboards_list | GET /api/storyboards | 200 list |", by: { file: BOARDS, test: "create, get, list and delete" } },
    { says: "| storyboards_create | POST /api/storyboards { name, bucketId? } | 201 storyboard |", by: { file: BOARDS, test: "create, get, list and delete" } },
    { says: "| storyboards_get | GET /api/storyboards/{id} | 200 storyboard with clips |", by: { file: BOARDS, test: "create, get, list and delete" } },
    { says: "| storyboards_delete | DELETE /api/storyboards/{id} | 200 |", by: { file: BOARDS, test: "create, get, list and delete" } },
    { says: "| storyboards_add_clip | POST /api/storyboards/{id}/clips { objectId, position?, note? } | 201 clip |", by: { file: BOARDS, test: "add clips: append by default, insert at a position shifts the rest, past the end is 400" } },
    { says: "| storyboards_reorder_clips | PUT /api/storyboards/{id}/clips/reorder { clipIds } | 200 storyboard |", by: { file: BOARDS, test: "reorder takes the complete list and answers the reordered storyboard" } },
    { says: "| storyboards_update_clip | PUT /api/storyboards/{id}/clips/{clipId} { position?, note? } | 200 clip |", by: { file: BOARDS, test: "update: moving a clip shifts the ones in between; note alone; out of range is 400" } },
    { says: "| storyboards_remove_clip | DELETE /api/storyboards/{id}/clips/{clipId} | 200 |", by: { file: BOARDS, test: "remove closes the gap" } },
    {
      says: "Names: trimmed, 1..128 characters (the limit of an upload label, which becomes a tag), no control characters, at least one letter or digit.",
      check: async (server) => {
        const org = await newOrg(server, "tag names");
        const longest = await org.admin.post("/api/tags", { name: ` ${"x".repeat(127)}7 ` });
        expect([longest.status, longest.body.name]).toEqual([201, `${"x".repeat(127)}7`]);
        for (const name of ["x".repeat(129), "a\u0007b", "  ", "--!"]) expect((await org.admin.post("/api/tags", { name })).status).toBe(400);
        // An upload label of the same length becomes a tag; one longer is refused.
        const bucketId = (await newBucket(org)).id;
        const presign = (tags: string[]) => org.admin.post("/api/presign/upload", { bucketId, key: `l-${crypto.randomUUID()}.txt`, contentType: "text/plain", tags });
        expect((await presign(["y".repeat(128)])).status).toBe(200);
        expect((await presign(["y".repeat(129)])).status).toBe(400);
      },
    },
    { says: '"Summer Sale 2024!" → summer-sale-2024, "Café Crème" → cafe-creme, "東京 タワー" → 東京-タワー', by: { file: TAGS, test: "create answers 201 with a slug derived from the name" } },
    { says: 'organization ("Red Car", "red-car", "RED_CAR" are one tag) answers 409 conflict with details: { existingId, slug }', by: { file: TAGS, test: "a name whose slug exists is 409 with the existing id" } },
    { says: 'We chose 409 over silently returning the existing tag so that a create never reports success for a name it did not store, and 201 always means "a new tag".', by: { file: TAGS, test: "a name whose slug exists is 409 with the existing id" } },
    { says: "text is also slugified, so night sky finds night-sky), case-insensitively; % and are literal.", by: { file: TAGS, test: "list: search by name or slug, pagination, only this organization" } },
    { says: "PUT /api/objects/{id}/tags replaces the object's complete tag list with tagIds (it never appends; [] removes all; repeated ids count once;", by: { file: TAGS, test: "objects_set_tags replaces the whole list (never appends)" } },
    {
      says: "at most 100). If any id is not a tag of the organization",
      check: async (server) => {
        const { org, objectId } = await orgWithObject(server);
        const ids = (n: number) => Array.from({ length: n }, () => crypto.randomUUID());
        // 100 unknown ids pass the schema and are looked up; 101 are refused before.
        expect((await org.admin.put(`/api/objects/${objectId}/tags`, { tagIds: ids(100) })).status).toBe(404);
        expect((await org.admin.put(`/api/objects/${objectId}/categories`, { categoryIds: ids(100) })).status).toBe(404);
        for (const [path, field] of [["tags", "tagIds"], ["categories", "categoryIds"]] as const) {
          const res = await org.admin.put(`/api/objects/${objectId}/${path}`, { [field]: ids(101) });
          expect([res.status, res.body.error.code, res.body.error.details[0].path]).toEqual([400, "validation_error", field]);
        }
      },
    },
    { says: "the answer is 404 not_found with details.missingIds and nothing changes", by: { file: TAGS, test: "an unknown or foreign tag id is 404 and changes nothing" } },
    { says: "parentId must be a category of the organization (404 Parent category not found otherwise).", by: { file: CATEGORIES, test: "a parent from another organization or unknown is 404" } },
    { says: "Moving a node under itself or one of its descendants would make a cycle and answers 409 conflict.", by: { file: CATEGORIES, test: "under itself or its own descendant: 409, nothing changes" } },
    { says: "so two crossing moves (A under B while B goes under A) cannot make a cycle either: one of them answers 409.", by: { file: CATEGORIES, test: "crossing moves at the same time never make a cycle" } },
    { says: "PUT /api/objects/{id}/categories works exactly like the tag replacement (replace, 404 with details.missingIds and no change for unknown ids, at most 100).", by: { file: CATEGORIES, test: "objects_set_categories replaces; unknown or foreign ids are 404 and change nothing" } },
    { says: "(21:9 at 2560×1080 passes, 16:9 at 1920×1000 is 400 on height)", by: { file: ITEMS, test: "item validation: aspect ratio W:H of positive integers, sizes, matching ratio, role" } },
    { says: "role is free text, 1..64 characters (thumbnail, hero, social).", by: { file: ITEMS, test: "item validation: aspect ratio W:H of positive integers, sizes, matching ratio, role" } },
    {
      says: "At most 100 items per set (409 beyond).",
      check: async (server) => {
        const { org, objectId } = await orgWithObject(server);
        const set = (await org.admin.post("/api/sets", { name: "full", baseObjectId: objectId })).body.id;
        for (let i = 0; i < 100; i++) expect((await org.admin.post(`/api/sets/${set}/items`, { ...item, objectId, role: `r${i}` })).status).toBe(201);
        const over = await org.admin.post(`/api/sets/${set}/items`, { ...item, objectId, role: "one more" });
        expect([over.status, over.body.error.code]).toEqual([409, "conflict"]);
        expect((await org.admin.get(`/api/sets/${set}`)).body.itemCount).toBe(100);
      },
    },
    { says: "A generated item (one without objectId) is at most 40 megapixels (8000×5000, 6324×6324; 400 on width beyond)", by: { file: LIMITS, test: "a generated item over 40 megapixels is 400; an attached one only describes its object" } },
    { says: "the generated items of one set total at most 400 megapixels (409, details: { limit, used })", by: { file: LIMITS, test: "the generated items of one set total at most 400 megapixels (409)" } },
    { says: "It must be a live object of the same bucket as the base object (400 on objectId otherwise,", by: { file: ITEMS, test: "an item's object must be live, in the organization, and in the set's bucket" } },
    { says: "403 first if it is outside a restricted key's bucket)", by: { file: ITEMS, test: "a bucket-restricted key works only on sets of its bucket" } },
    { says: 'POST /api/sets/{id}/generate answers 202 with { setId, jobId, status: "queued", items }', by: { file: ITEMS, test: "generate answers exactly 202 and records a sets.generate job in the outbox" } },
    { says: "up to 60 an hour per organization (then 429 rate_limited with Retry-After until the oldest of the hour leaves the window).", by: { file: LIMITS, test: "generations per organization an hour; then 429 with Retry-After" } },
    { says: "A set whose base object was deleted answers 409 conflict.", by: { file: ITEMS, test: "soft-deleted objects are marked, not dropped; generate without a live base is 409" } },
    {
      says: "The worker also skips any item over 40 megapixels and any encoded rendition over 64 MiB (logged).",
      check: async (server) => {
        const { org, bucketId } = await orgWithObject(server);
        const { png } = await import("../support/media-files.ts");
        const { upload } = await import("../support/upload.ts");
        const base = await upload(org.admin, bucketId, "base.png", await png(32, 32), { contentType: "image/png" });
        const set = (await org.admin.post("/api/sets", { name: "legacy", baseObjectId: base.id })).body.id;
        expect((await org.admin.post(`/api/sets/${set}/items`, item)).status).toBe(201);
        // An item from before the limit existed: the API refuses such sizes now, so it is written directly.
        await server.services.deps.db.insert(mediaSetItems).values({ orgId: org.orgId, setId: set, source: "generated", aspectRatio: "1:1", width: 7000, height: 7000, role: "legacy" });
        const waited = await org.admin.post(`/api/sets/${set}/generate`, { wait: true });
        expect(waited.status).toBe(202);
        const states = Object.fromEntries(waited.body.renditions.map((r: { role: string; state: string; error: string | null }) => [r.role, [r.state, r.error]]));
        expect(states).toEqual({ square: ["made", null], legacy: ["failed", "Over the rendition limit of 40 megapixels"] });
        // No real picture encodes past 64 MiB at 40 megapixels, so that bound is held to the number the page names.
        expect(MAX_RENDITION_BYTES).toBe(64 * 1024 * 1024);
      },
    },
    { says: 'With {"wait": true} the call answers (still 202) once every item it queued is made or failed', by: { file: "test/e2e/mcp-sets-wait.test.ts", test: "REST: POST /api/sets/{id}/generate with wait answers the settled items; without it, queued at once" } },
    {
      says: "At most 1000 clips;",
      check: async (server) => {
        const { org, objectId } = await orgWithObject(server);
        const board = (await org.admin.post("/api/storyboards", { name: "full" })).body.id;
        // 999 clips written directly (1000 requests would only cost time), the 1000th through the API.
        await server.services.deps.db
          .insert(storyboardClips)
          .values(Array.from({ length: 999 }, (_, position) => ({ orgId: org.orgId, storyboardId: board, objectId, position })));
        expect((await org.admin.post(`/api/storyboards/${board}/clips`, { objectId })).status).toBe(201);
        const over = await org.admin.post(`/api/storyboards/${board}/clips`, { objectId });
        expect(over.status).toBe(409);
        expect((await org.admin.get(`/api/storyboards/${board}`)).body.clipCount).toBe(1000);
      },
    },
    { says: 'a note is at most 2000 characters (default "").', by: { file: BOARDS, test: "add clips: append by default, insert at a position shifts the rest, past the end is 400" } },
    { says: "A position past the end is 400 on position (not clamped", by: { file: BOARDS, test: "add clips: append by default, insert at a position shifts the rest, past the end is 400" } },
    { says: "note replaces the note; give at least one (400 otherwise).", by: { file: BOARDS, test: "update: moving a clip shifts the ones in between; note alone; out of range is 400" } },
    { says: "any missing clip and any repeated id is 400 validation_error with one detail per problem", by: { file: BOARDS, test: "reorder with a foreign, missing, duplicated or unknown id is 400 and changes nothing" } },
    { says: "every clip must then come from that bucket (400 on objectId otherwise)", by: { file: BOARDS, test: "a bucket-restricted key works on storyboards bound to its bucket" } },
    { says: "sees only those, and gets 403 on any other storyboard of the organization.", by: { file: BOARDS, test: "a bucket-restricted key works on storyboards bound to its bucket" } },
    {
      says: "a soft-deleted object cannot be given new tags, categories, items or clips (404).",
      check: async (server) => {
        const { org, objectId } = await orgWithObject(server);
        const gone = (await insertObject(server, org, (await newBucket(org)).id)).id;
        await softDeleteObject(server, gone);
        const tag = (await org.admin.post("/api/tags", { name: "gone" })).body.id;
        const category = (await org.admin.post("/api/categories", { name: "gone" })).body.id;
        const set = (await org.admin.post("/api/sets", { name: "gone", baseObjectId: objectId })).body.id;
        const board = (await org.admin.post("/api/storyboards", { name: "gone" })).body.id;
        for (const res of [
          await org.admin.put(`/api/objects/${gone}/tags`, { tagIds: [tag] }),
          await org.admin.put(`/api/objects/${gone}/categories`, { categoryIds: [category] }),
          await org.admin.post(`/api/sets/${set}/items`, { ...item, objectId: gone }),
          await org.admin.post(`/api/storyboards/${board}/clips`, { objectId: gone }),
        ]) expect([res.status, res.body.error.code]).toEqual([404, "not_found"]);
      },
    },
    { says: "| Tags, categories | list (counts cover B only), create, assign to objects in B; not delete (403): they are shared by every bucket |", by: { file: TAGS, test: "a bucket-restricted key: counts and assigns in its bucket only, cannot delete tags" } },
    { says: "| Tags, categories | list (counts cover B only), create, assign to objects in B; not delete (403): they are shared by every bucket |", by: { file: CATEGORIES, test: "a bucket-restricted key: sees the tree, assigns in its bucket only, cannot delete" } },
    { says: "| Sets | sets whose base object is in B only; other sets of the organization are 403 |", by: { file: ITEMS, test: "a bucket-restricted key works only on sets of its bucket" } },
    { says: "| Storyboards | storyboards bound to B only (and it creates bound ones); others are 403 |", by: { file: BOARDS, test: "a bucket-restricted key works on storyboards bound to its bucket" } },
    {
      says: "so a page of 100 views reads no label table.",
      check: async (server) => {
        const { org, bucketId, objectId } = await orgWithObject(server);
        // Not pictures: no thumbnail jobs for the worker (99 of them took most of the check's 11 s).
        for (let i = 0; i < 99; i++) await insertObject(server, org, bucketId, { contentType: "application/octet-stream" });
        // The column written behind the service's back, with a tag no link table holds: only a
        // view that reads the row shows it (the database's triggers rewrite it from the links,
        // so changing a link would change the column too).
        const only = { id: crypto.randomUUID(), name: "from the row", slug: "from-the-row" };
        await server.services.deps.db.update(mediaObjects).set({ labels: { tags: [only], categories: [] } }).where(eq(mediaObjects.id, objectId));
        const page = await org.admin.get(`/api/media?bucketId=${bucketId}&limit=100`);
        expect(page.body.data).toHaveLength(100);
        expect(page.body.data.find((o: { id: string }) => o.id === objectId).tags.map((t: { slug: string }) => t.slug)).toEqual(["from-the-row"]);
      },
    },
  ],
  notPromises: [],
} satisfies PageClaims;
