import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { registry } from "../../tools/registry.ts";
import { newOrg, startServer, type TestServer } from "../support/server.ts";
import { buildFixture, callMcp, callRest, connectMcp, expectCoversRegistry, type Fixture, type Input, leaked, orgDigest, secretsOf } from "./matrix-fixtures.ts";

/**
 * Organization B's admin, on organization A's ids, gets 404 and changes
 * nothing; B's lists, search, facets, usage and billing never show A's data. Every registry
 * tool needs an entry here, so a new tool cannot ship without its tenancy case.
 */

type Build = (a: Fixture, b: Fixture) => Input;
type Case =
  /** B acts on A's ids (possibly mixed with its own): refused as if they did not exist. */
  | { kind: "foreign"; input: Build; status: number; code: string }
  /** B acts on its own data or none: works, and nothing of A shows in the answer. */
  | { kind: "own"; input: Build; status: number[]; mcpError?: string };

const foreign = (input: Build, status = 404, code = "not_found"): Case => ({ kind: "foreign", input, status, code });
const own = (input: Build, status = [200, 201, 202], mcpError?: string): Case => ({ kind: "own", input, status, mcpError });
const unique = (what: string) => `${what}-${crypto.randomUUID().slice(0, 8)}`;
const item = { aspectRatio: "1:1", width: 10, height: 10, role: "intruder" };

const table: Record<string, Case[]> = {
  me_get: [own(() => ({}))],
  api_keys_list: [own(() => ({}))],
  api_keys_create: [foreign((a) => ({ name: "x", bucketId: a.main.bucketId })), own(() => ({ name: unique("key") }))],
  api_keys_delete: [foreign((a) => ({ id: a.readKeyId })), foreign((a) => ({ id: a.org.adminKey.id }))],
  api_keys_rotate: [foreign((a) => ({ id: a.readKeyId })), foreign((a) => ({ id: a.mainKeyId }))],
  service_credentials_list: [own(() => ({}))],
  service_credentials_create: [foreign((a) => ({ name: "x", bucketId: a.main.bucketId })), own(() => ({ name: unique("service") }))],
  service_credentials_delete: [foreign((a) => ({ id: a.serviceCredentialId })), foreign((a) => ({ id: a.otherServiceCredentialId }))],
  oauth_grants_list: [own(() => ({}))],
  oauth_grants_revoke: [foreign((a) => ({ id: a.grantId })), foreign((a) => ({ id: a.otherGrantId }))],

  buckets_list: [own(() => ({}))],
  buckets_create: [own(() => ({ name: unique("bucket") }))],
  buckets_get: [foreign((a) => ({ id: a.main.bucketId }))],
  buckets_delete: [foreign((a) => ({ id: a.emptyBucketId })), foreign((a) => ({ id: a.main.bucketId }))],

  media_list: [foreign((a) => ({ bucketId: a.main.bucketId })), own(() => ({})), own((a) => ({ search: a.marker }))],
  media_get: [foreign((a) => ({ id: a.main.objectId }))],
  media_similar: [foreign((a) => ({ id: a.main.objectId })), foreign((a, b) => ({ id: b.main.objectId, bucketId: a.main.bucketId })), own((_, b) => ({ id: b.main.objectId, maxDistance: 10 }))],
  media_duplicates: [foreign((a) => ({ id: a.main.bucketId })), own((_, b) => ({ id: b.main.bucketId, maxDistance: 10 }))],
  media_delete: [foreign((a) => ({ id: a.main.objectId }))],
  media_update_metadata: [foreign((a) => ({ id: a.main.objectId, metadata: { owned: true } }))],
  objects_move: [foreign((a) => ({ id: a.main.objectId, key: "stolen.jpg" })), foreign((a, b) => ({ id: b.main.object2Id, key: "out.jpg", bucketId: a.main.bucketId }))],
  objects_bulk_update: [
    foreign((a) => ({ filter: { bucketId: a.main.bucketId }, addTags: ["intruder"] })),
    foreign((a, b) => ({ ids: [b.main.object2Id], moveTo: { bucketId: a.main.bucketId } })),
    foreign((a, b) => ({ ids: [b.main.object2Id], addCategories: [a.categoryId] })),
  ],
  objects_bulk_delete: [foreign((a) => ({ filter: { bucketId: a.main.bucketId } })), own((_a, b) => ({ ids: [b.main.trashedId] }))],
  media_stream: [foreign((a) => ({ id: a.main.objectId }))],
  trash_list: [foreign((a) => ({ bucketId: a.main.bucketId })), own(() => ({}))],
  trash_restore: [foreign((a) => ({ id: a.main.trashedId })), foreign((a) => ({ id: a.other.trashedId }))],
  trash_purge: [foreign((a) => ({ id: a.main.trashedId }))],
  media_thumbnail: [foreign((a) => ({ id: a.main.objectId }))],
  media_render: [foreign((a) => ({ id: a.main.objectId, width: 10 }))],
  media_render_url: [foreign((a) => ({ id: a.main.objectId, width: 10 }))],
  media_settings_get: [own(() => ({}))],
  media_settings_update: [own(() => ({ stripLocation: true }))],

  presign_upload: [foreign((a) => ({ bucketId: a.main.bucketId, key: "intruder.txt", size: 10 }))],
  media_import: [foreign((a) => ({ bucketId: a.main.bucketId, key: "intruder.jpg", url: "http://localhost:9/intruder.jpg" }))],
  media_import_get: [foreign((a) => ({ id: a.main.importId }))],
  presign_create_multipart: [foreign((a) => ({ bucketId: a.main.bucketId, key: "intruder.bin", size: 10 }))],
  presign_upload_part: [
    foreign((a) => ({ bucketId: a.main.bucketId, key: a.main.uploadKey, uploadId: a.main.uploadId, partNumber: 1 })),
    foreign((a, b) => ({ bucketId: b.main.bucketId, key: a.main.uploadKey, uploadId: a.main.uploadId, partNumber: 1 })),
  ],
  presign_complete_upload: [
    foreign((a) => ({ bucketId: a.main.bucketId, key: a.main.uploadKey, uploadId: a.main.uploadId })),
    foreign((a, b) => ({ bucketId: b.main.bucketId, key: a.main.uploadKey, uploadId: a.main.uploadId })),
  ],
  presign_abort_multipart: [
    foreign((a) => ({ bucketId: a.main.bucketId, key: a.main.uploadKey, uploadId: a.main.uploadId })),
    foreign((a, b) => ({ bucketId: b.main.bucketId, key: a.main.uploadKey, uploadId: a.main.uploadId })),
  ],
  presign_confirm: [
    foreign((a) => ({ bucketId: a.main.bucketId, key: a.main.objectKey })),
    foreign((a) => ({ bucketId: a.main.bucketId, key: a.main.uploadKey })),
    foreign((a, b) => ({ bucketId: b.main.bucketId, key: a.main.objectKey })),
  ],
  presign_download: [foreign((a) => ({ objectId: a.main.objectId }))],

  search: [
    foreign((a) => ({ q: a.marker, bucketId: a.main.bucketId })),
    own((a) => ({ q: a.marker })),
    // Both organizations' metadata says "caption": hits and facets must be B's alone.
    own(() => ({ q: "caption" })),
  ],

  media_text_extract: [foreign((a) => ({ id: a.main.objectId })), foreign((a) => ({ bucketId: a.main.bucketId })), own(() => ({}))],

  tags_list: [own(() => ({})), own((a) => ({ search: a.marker }))],
  tags_create: [own(() => ({ name: unique("tag") }))],
  tags_delete: [foreign((a) => ({ id: a.tagId }))],
  objects_set_tags: [foreign((a) => ({ id: a.main.objectId, tagIds: [] })), foreign((a, b) => ({ id: b.main.objectId, tagIds: [a.tag2Id] }))],

  categories_list: [own(() => ({}))],
  categories_create: [foreign((a) => ({ name: "intruder", parentId: a.categoryId })), own(() => ({ name: unique("category") }))],
  categories_move: [foreign((a) => ({ id: a.childCategoryId, parentId: null })), foreign((a, b) => ({ id: b.childCategoryId, parentId: a.categoryId }))],
  categories_delete: [foreign((a) => ({ id: a.categoryId }))],
  objects_set_categories: [
    foreign((a) => ({ id: a.main.objectId, categoryIds: [] })),
    foreign((a, b) => ({ id: b.main.objectId, categoryIds: [a.categoryId] })),
  ],

  sets_list: [own(() => ({}))],
  sets_create: [foreign((a) => ({ name: "intruder", baseObjectId: a.main.objectId }))],
  sets_get: [foreign((a) => ({ id: a.main.setId }))],
  sets_delete: [foreign((a) => ({ id: a.main.setId }))],
  sets_add_item: [foreign((a) => ({ id: a.main.setId, ...item })), foreign((a, b) => ({ id: b.main.setId, objectId: a.main.object2Id, ...item }))],
  sets_remove_item: [
    foreign((a) => ({ id: a.main.setId, itemId: a.main.generatedItemId })),
    foreign((a, b) => ({ id: b.main.setId, itemId: a.main.attachedItemId })),
  ],
  sets_generate: [foreign((a) => ({ id: a.main.setId }))],

  storyboards_list: [own(() => ({}))],
  storyboards_create: [foreign((a) => ({ name: "intruder", bucketId: a.main.bucketId })), own(() => ({ name: unique("board") }))],
  storyboards_get: [foreign((a) => ({ id: a.main.storyboardId }))],
  storyboards_delete: [foreign((a) => ({ id: a.main.storyboardId }))],
  storyboards_add_clip: [
    foreign((a) => ({ id: a.main.storyboardId, objectId: a.main.objectId })),
    foreign((a, b) => ({ id: b.main.storyboardId, objectId: a.main.objectId })),
  ],
  storyboards_reorder_clips: [
    foreign((a) => ({ id: a.main.storyboardId, clipIds: [...a.main.clipIds].reverse() })),
    // The storyboard is B's own: A's clip ids are just ids that are not among its clips.
    foreign((a, b) => ({ id: b.main.storyboardId, clipIds: a.main.clipIds }), 400, "validation_error"),
  ],
  storyboards_update_clip: [
    foreign((a) => ({ id: a.main.storyboardId, clipId: a.main.clipIds[0], note: "intruder" })),
    foreign((a, b) => ({ id: b.main.storyboardId, clipId: a.main.clipIds[0], note: "intruder" })),
  ],
  storyboards_remove_clip: [
    foreign((a) => ({ id: a.main.storyboardId, clipId: a.main.clipIds[0] })),
    foreign((a, b) => ({ id: b.main.storyboardId, clipId: a.main.clipIds[0] })),
  ],

  usage_get: [own(() => ({}))],
  usage_history: [own(() => ({}))],
  usage_events_list: [own(() => ({}))],

  billing_subscription_get: [own(() => ({}))],
  billing_capacity_add: [own(() => ({ gb: 1 }))],
  billing_capacity_auto_set: [own(() => ({ enabled: false, incrementGb: 1, thresholdPct: 90, maxMonthlySpendCents: 0 }))],
  billing_downgrade: [own(() => ({ tierKey: "free" }))],
  // No payment provider in tests: what matters is that B's answer carries nothing of A.
  billing_invoices_list: [own(() => ({}), [501], "not_configured")],
  billing_portal_get: [own(() => ({}), [501], "not_configured")],

  reconcile_run: [own(() => ({}))],

  webhooks_create: [own(() => ({ url: "http://127.0.0.1:9/intruder", eventTypes: ["bucket.deleted"] }), [201])],
  webhooks_list: [own(() => ({}))],
  webhooks_get: [foreign((a) => ({ id: a.webhookId }))],
  webhooks_update: [foreign((a) => ({ id: a.webhookId, url: "http://127.0.0.1:9/stolen" }))],
  webhooks_enable: [foreign((a) => ({ id: a.webhookId }))],
  webhooks_disable: [foreign((a) => ({ id: a.webhookId }))],
  webhooks_delete: [foreign((a) => ({ id: a.webhookId }))],
  webhooks_rotate_secret: [foreign((a) => ({ id: a.webhookId }))],
  webhooks_send_test: [foreign((a) => ({ id: a.webhookId }))],
  webhooks_deliveries_list: [foreign((a) => ({ id: a.webhookId })), own((_a, b) => ({ id: b.webhookId }))],
  webhooks_redeliver: [foreign((a) => ({ id: a.webhookId, deliveryId: a.deliveryId })), foreign((a, b) => ({ id: b.webhookId, deliveryId: a.deliveryId }))],
  // B's audit log holds B's calls only. Those the matrix made at A's ids name them (the ids B
  // itself sent, refused): the cases here read the rest, which must show nothing of A.
  audit_list: [own(() => ({ outcome: "succeeded" })), own((a) => ({ outcome: "succeeded", targetId: a.main.objectId }))],
};

let server: TestServer;
let A: Fixture;
let B: Fixture;
let secretsA: string[];
let mcpB: Client;

beforeAll(async () => {
  server = await startServer();
  A = await buildFixture(await newOrg(server, "Org A"));
  B = await buildFixture(await newOrg(server, "Org B"));
  secretsA = secretsOf(A);
  mcpB = await connectMcp(server, B.org.adminKey.secret);
}, 120_000);
afterAll(async () => {
  await mcpB?.close();
  await server.stop();
}, 60_000);

describe("tenancy matrix", () => {
  test("the table has an entry for every registry tool and nothing else", () => {
    expectCoversRegistry(table);
  });

  for (const tool of registry) {
    test(`${tool.name}: B cannot see or touch A`, async () => {
      const cases = table[tool.name];
      if (!cases) throw new Error(`${tool.name} has no tenancy entry: add one to the table in test/hardening/tenancy.test.ts`);
      expect(cases.length).toBeGreaterThan(0);
      const before = await orgDigest(server, A);
      for (const c of cases) {
        const input = c.input(A, B);
        const rest = await callRest(B.org.admin, tool, input);
        const mcp = await callMcp(mcpB, tool, c.kind === "own" ? c.input(A, B) : input);
        const label = `${tool.name} ${JSON.stringify(input)}`;
        if (c.kind === "foreign") {
          expect({ label, status: rest.status, code: rest.body?.error?.code }).toEqual({ label, status: c.status, code: c.code });
          expect({ label, code: mcp.error?.code }).toEqual({ label, code: c.code });
        } else {
          expect({ label, status: c.status.includes(rest.status) ? "expected" : rest.status, body: rest.body }).toMatchObject({ label, status: "expected" });
          expect({ label, code: mcp.error?.code ?? null }).toEqual({ label, code: c.mcpError ?? null });
          expect({ label, rest: leaked(rest.body, secretsA), mcp: leaked(mcp.body, secretsA) }).toEqual({ label, rest: [], mcp: [] });
        }
      }
      expect(await orgDigest(server, A)).toEqual(before);
    });
  }

  test("B may reuse A's names: nothing reveals that A has them", async () => {
    const [bucketName, tagName, categoryName] = [`${A.marker}-empty`, `${A.marker} tag`, `${A.marker} root`];
    const bucket = await B.org.admin.post("/api/buckets", { name: bucketName });
    expect(bucket.status).toBe(201);
    const tag = await B.org.admin.post("/api/tags", { name: tagName });
    expect(tag.status).toBe(201);
    const category = await B.org.admin.post("/api/categories", { name: categoryName });
    expect(category.status).toBe(201);
    // A's slug is taken in A only: B's gets no -2 suffix.
    const aSlug = (await A.org.admin.get("/api/categories")).body.data.find((c: { id: string }) => c.id === A.categoryId).slug;
    expect(category.body.slug).toBe(aSlug);
    expect(tag.body.objectCount).toBe(0);
  });

  test("B's usage counts B's objects and reservations only", async () => {
    const usage = await B.org.admin.get("/api/usage");
    const media = await B.org.admin.get("/api/media?limit=200");
    expect(usage.status).toBe(200);
    expect(usage.body.objectCount).toBe(media.body.total);
    expect(usage.body.usedStorage).toBe(media.body.data.reduce((n: number, m: { size: number }) => n + m.size, 0));
    // The fixture's two multipart uploads declared 1234 bytes each.
    expect(usage.body.reservedStorage).toBe(2 * 1234);
  });

  // Last, since it changes A: proves the matrix's instruments can see what they look for.
  test("the digest and the leak check notice A's own changes and data", async () => {
    const all = await A.org.admin.get("/api/media");
    expect(leaked(all.body, secretsA)).toContain(A.main.objectId);
    const before = await orgDigest(server, A);
    // Two live objects and one in the trash per bucket.
    expect(before.media_objects!.length).toBe(6);
    expect(before.upload_reservations!.length).toBe(2);
    const updated = await A.org.admin.put(`/api/media/${A.main.objectId}/metadata`, { metadata: { changed: true } });
    expect(updated.status).toBe(200);
    expect(await orgDigest(server, A)).not.toEqual(before);
  });
});
