import { describe, expect, test } from "bun:test";
import { registry } from "../../tools/registry.ts";
import { eventually } from "../support/eventually.ts";
import { withServerAndOrg } from "../support/fixtures.ts";
import type { Api } from "../support/http.ts";
import { pdf, png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { approvedGrant } from "../support/oauth.ts";
import { upload } from "../support/upload.ts";
import { type Receiver, startReceiver } from "../support/webhook-receiver.ts";

/**
 * Every list answer agrees with the single-object answer of the same thing, field by field:
 * a list row is what the `…_get` answers (or its documented subset: a storyboard without its
 * clips, a set without its items), and its counts are the lengths of what the get holds. The
 * objects are made with content that a wrong join or count would show (labels, clips, items,
 * sizes, a bucket-bound storyboard). Where a list has no get, the row is held to the nearest
 * answer about that one thing: what creating it answered, the media object it counts, the
 * receiver that got the delivery. A `…_list` tool the table misses fails the first test.
 */

type Row = Record<string, any>;

let server: TestServer;
let org: TestOrg;
let rx: Receiver;
let bucket: { id: string; name: string };
let other: { id: string; name: string };
/** Objects in `bucket` (picture, pdf, notes) and one in `other`. */
let picture: Row;
let paper: Row;
let notes: Row[];
let elsewhere: Row;
let tags: Record<"sunset" | "beach" | "unused", Row>;
let categories: Record<"travel" | "europe" | "empty", Row>;
let sets: Row[];
let storyboards: Row[];
let keys: Row[];
let credentials: Row[];
let endpoints: Row[];
let trashed: Row;

const ok = async (res: Promise<{ status: number; body: any }>, status = 200) => {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
};

async function settled(api: Api, id: string): Promise<Row> {
  return eventually(
    async () => {
      const o = (await api.get(`/api/media/${id}`)).body;
      return o.thumbnail && o.thumbnail.state !== "pending" ? o : undefined;
    },
    { what: `the thumbnail of ${id} to settle`, timeoutMs: 120_000 },
  );
}

withServerAndOrg({
  server: { env: { WEBHOOK_BACKOFF_MS: "100", WEBHOOK_TIMEOUT_MS: "5000" } },
  ready: async (made) => {
    ({ server, org } = made);
    const api = org.admin;
    rx = startReceiver();
    bucket = await newBucket(org, "lists");
    other = await newBucket(org, "others");

    tags = {
      sunset: await ok(api.post("/api/tags", { name: "Sunset" }), 201),
      beach: await ok(api.post("/api/tags", { name: "Beach" }), 201),
      unused: await ok(api.post("/api/tags", { name: "Unused" }), 201),
    };
    const travel = await ok(api.post("/api/categories", { name: "Travel" }), 201);
    categories = {
      travel,
      europe: await ok(api.post("/api/categories", { name: "Europe", parentId: travel.id }), 201),
      empty: await ok(api.post("/api/categories", { name: "Empty" }), 201),
    };

    picture = await upload(api, bucket.id, "photos/red.png", await png(64, 48), { contentType: "image/png" });
    paper = await upload(api, bucket.id, "docs/paper.pdf", pdf(2), { contentType: "application/pdf" });
    notes = [];
    for (let i = 0; i < 5; i++) notes.push(await upload(api, bucket.id, `notes/n${i}.txt`, "x".repeat(10 + i)));
    elsewhere = await upload(api, other.id, "far/away.txt", "elsewhere");
    await ok(api.put(`/api/objects/${picture.id}/tags`, { tagIds: [tags.sunset.id, tags.beach.id] }));
    await ok(api.put(`/api/objects/${notes[0]!.id}/tags`, { tagIds: [tags.sunset.id] }));
    await ok(api.put(`/api/objects/${elsewhere.id}/tags`, { tagIds: [tags.sunset.id] }));
    await ok(api.put(`/api/objects/${picture.id}/categories`, { categoryIds: [categories.europe.id] }));
    await ok(api.put(`/api/objects/${paper.id}/categories`, { categoryIds: [categories.travel.id, categories.europe.id] }));
    await ok(api.put(`/api/media/${picture.id}/metadata`, { metadata: { camera: "X100", rating: 4, public: true, note: null } }));
    for (const o of [picture, paper, ...notes, elsewhere]) await settled(api, o.id);

    const withItems = await ok(api.post("/api/sets", { name: "Hero shots", baseObjectId: picture.id }), 201);
    await ok(api.post(`/api/sets/${withItems.id}/items`, { objectId: notes[1]!.id, aspectRatio: "4:3", width: 64, height: 48, role: "attached" }), 201);
    await ok(api.post(`/api/sets/${withItems.id}/items`, { aspectRatio: "1:1", width: 32, height: 32, role: "square" }), 201);
    await ok(api.post(`/api/sets/${withItems.id}/items`, { aspectRatio: "16:9", width: 64, height: 36, role: "wide" }), 201);
    const bare = await ok(api.post("/api/sets", { name: "Empty set", baseObjectId: paper.id }), 201);
    sets = [withItems, bare];

    const five = await ok(api.post("/api/storyboards", { name: "Five clips" }), 201);
    for (const [i, n] of notes.entries()) await ok(api.post(`/api/storyboards/${five.id}/clips`, { objectId: n.id, note: `clip ${i}` }), 201);
    const bound = await ok(api.post("/api/storyboards", { name: "Bound", bucketId: bucket.id }), 201);
    await ok(api.post(`/api/storyboards/${bound.id}/clips`, { objectId: picture.id }), 201);
    await ok(api.post(`/api/storyboards/${bound.id}/clips`, { objectId: paper.id, position: 0 }), 201);
    const empty = await ok(api.post("/api/storyboards", { name: "No clips" }), 201);
    storyboards = [five, bound, empty];

    const restricted = await ok(api.post("/api/api-keys", { name: "restricted", scopes: ["read", "write"], bucketId: bucket.id, expiresInDays: 30 }), 201);
    const rotated = await ok(api.post("/api/api-keys", { name: "rotated", scopes: ["read"] }), 201);
    keys = [restricted, await ok(api.put(`/api/api-keys/${rotated.id}/rotate`))];
    credentials = [
      await ok(api.post("/api/service-credentials", { name: "indexer", scopes: ["read"], bucketId: other.id }), 201),
      await ok(api.post("/api/service-credentials", { name: "writer", scopes: ["read", "write"] }), 201),
    ];

    const live = await ok(api.post("/api/webhooks", { url: rx.url, description: "all events" }), 201);
    const narrow = await ok(api.post("/api/webhooks", { url: `${rx.url}/narrow`, description: "media only", eventTypes: ["media.created", "media.deleted"] }), 201);
    await ok(api.post(`/api/webhooks/${narrow.id}/disable`));
    endpoints = [live, narrow];

    const doomed = await upload(api, bucket.id, "trash/old.png", await png(8, 8), { contentType: "image/png" });
    await ok(api.put(`/api/objects/${doomed.id}/tags`, { tagIds: [tags.beach.id] }));
    trashed = await settled(api, doomed.id);
    await ok(api.delete(`/api/media/${doomed.id}`));
  },
  cleanup: () => rx?.stop(),
});

/** Every row of a paged list (the seeded lists are short; 200 is the largest page). */
async function rows(api: Api, path: string): Promise<Row[]> {
  const body = await ok(api.get(`${path}${path.includes("?") ? "&" : "?"}limit=200`));
  expect(body.hasMore).toBe(false);
  expect(body.total).toBe(body.data.length);
  return body.data;
}

const byId = (list: Row[], id: string): Row => {
  const found = list.find((r) => r.id === id);
  if (!found) throw new Error(`${id} is not in the list`);
  return found;
};

const without = (o: Row, ...fields: string[]): Row => Object.fromEntries(Object.entries(o).filter(([k]) => !fields.includes(k)));

/** The category tree, flattened. */
const flatten = (nodes: Row[]): Row[] => nodes.flatMap((n) => [n, ...flatten(n.children)]);

/**
 * One case per list tool: `agree` reads the list and the single answers and checks each row
 * against its single answer. Lists without a single-object tool say what they are held to.
 */
const cases: Record<string, { agree: () => Promise<void> } | { notApplicable: string }> = {
  buckets_list: {
    agree: async () => {
      const listed = await rows(org.admin, "/api/buckets");
      for (const b of [bucket, other]) expect(byId(listed, b.id)).toEqual(await ok(org.admin.get(`/api/buckets/${b.id}`)));
    },
  },
  media_list: {
    agree: async () => {
      const listed = await rows(org.admin, "/api/media");
      for (const o of [picture, paper, ...notes, elsewhere]) {
        const single = await ok(org.admin.get(`/api/media/${o.id}`));
        expect(byId(listed, o.id)).toEqual(single);
      }
      // The labels, metadata and sizes the seed gave are really there, so equality means something.
      const pic = byId(listed, picture.id);
      expect(pic.tags.map((t: Row) => t.slug).sort()).toEqual(["beach", "sunset"]);
      expect(pic.categories.map((c: Row) => c.slug)).toEqual(["europe"]);
      expect(pic.metadata).toEqual({ camera: "X100", rating: 4, public: true, note: null });
      expect(notes.map((n) => byId(listed, n.id).size)).toEqual([10, 11, 12, 13, 14]);
      // A filtered page and a restricted key's page hold the same rows.
      const restricted = server.api.withToken(keys[0]!.secret);
      for (const [api, path] of [
        [org.admin, `/api/media?bucketId=${bucket.id}&tags=sunset`],
        [restricted, "/api/media?categories=travel"],
      ] as const) {
        for (const row of await rows(api, path)) expect(row).toEqual(await ok(org.admin.get(`/api/media/${row.id}`)));
      }
    },
  },
  tags_list: {
    // No tags_get: a tag is the label media_get carries, and its count is what media_list finds with it.
    agree: async () => {
      for (const api of [org.admin, server.api.withToken(keys[0]!.secret)]) {
        const listed = await rows(api, "/api/tags");
        for (const t of Object.values(tags)) {
          const row = byId(listed, t.id);
          expect(without(row, "objectCount")).toEqual(without(t, "objectCount"));
          expect(row.objectCount).toBe((await ok(api.get(`/api/media?tags=${t.slug}&limit=1`))).total);
        }
      }
      expect(byId(await rows(org.admin, "/api/tags"), tags.sunset.id).objectCount).toBe(3);
      const label = (await ok(org.admin.get(`/api/media/${picture.id}`))).tags.find((l: Row) => l.id === tags.beach.id);
      expect(label).toEqual({ id: tags.beach.id, name: tags.beach.name, slug: tags.beach.slug });
    },
  },
  categories_list: {
    // No categories_get: a node is what creating it answered, and it counts the objects whose media_get lists it.
    agree: async () => {
      for (const api of [org.admin, server.api.withToken(keys[0]!.secret)]) {
        const tree = await ok(api.get("/api/categories"));
        expect(tree.hasMore).toBe(false);
        const nodes = flatten(tree.data);
        expect(tree.total).toBe(nodes.length);
        const visible = await rows(api, "/api/media");
        for (const c of Object.values(categories)) {
          const node = byId(nodes, c.id);
          expect(without(node, "objectCount", "children")).toEqual(c);
          expect(node.objectCount).toBe(visible.filter((o) => o.categories.some((l: Row) => l.id === c.id)).length);
        }
      }
      const nodes = flatten((await ok(org.admin.get("/api/categories"))).data);
      expect([byId(nodes, categories.travel.id).objectCount, byId(nodes, categories.europe.id).objectCount]).toEqual([1, 2]);
      expect(byId(nodes, categories.travel.id).children.map((c: Row) => c.id)).toEqual([categories.europe.id]);
    },
  },
  sets_list: {
    agree: async () => {
      const listed = await rows(org.admin, "/api/sets");
      for (const s of sets) {
        const single = await ok(org.admin.get(`/api/sets/${s.id}`));
        expect(byId(listed, s.id)).toEqual(without(single, "items"));
        expect(byId(listed, s.id).itemCount).toBe(single.items.length);
      }
      expect(byId(listed, sets[0]!.id).itemCount).toBe(3);
    },
  },
  storyboards_list: {
    agree: async () => {
      for (const api of [org.admin, server.api.withToken(keys[0]!.secret)]) {
        const listed = await rows(api, "/api/storyboards");
        for (const sb of api === org.admin ? storyboards : [storyboards[1]!]) {
          const single = await ok(api.get(`/api/storyboards/${sb.id}`));
          expect(byId(listed, sb.id)).toEqual(without(single, "clips"));
          expect(byId(listed, sb.id).clipCount).toBe(single.clips.length);
        }
      }
      const listed = await rows(org.admin, "/api/storyboards");
      expect(storyboards.map((sb) => byId(listed, sb.id).clipCount)).toEqual([5, 2, 0]);
    },
  },
  api_keys_list: {
    // No api_keys_get: a row is what creating (or last rotating) the key answered, without the secret.
    agree: async () => {
      const listed = await rows(org.admin, "/api/api-keys");
      for (const k of keys) expect(byId(listed, k.id)).toEqual(without(k, "secret", "note"));
      expect(byId(listed, keys[1]!.id).rotatedAt).toBeString();
      // And the key's own view of itself says the same.
      const me = (await ok(server.api.withToken(keys[0]!.secret).get("/api/me"))).credential;
      expect({ id: me.apiKeyId, accessKeyId: me.accessKeyId, bucketId: me.bucketId, expiresAt: me.expiresAt }).toEqual({
        id: keys[0]!.id,
        accessKeyId: keys[0]!.accessKeyId,
        bucketId: bucket.id,
        expiresAt: byId(listed, keys[0]!.id).expiresAt,
      });
    },
  },
  service_credentials_list: {
    // No service_credentials_get: a row is what creating the credential answered, without the secret.
    agree: async () => {
      const listed = await rows(org.admin, "/api/service-credentials");
      for (const c of credentials) expect(byId(listed, c.id)).toEqual(without(c, "secret", "note"));
    },
  },
  oauth_grants_list: {
    // No oauth_grants_get: a row is held to what revoking that grant answers, before and after.
    agree: async () => {
      const grants = [await approvedGrant(server.url, org.adminKey.secret, { scopes: ["read"] }), await approvedGrant(server.url, org.adminKey.secret, { scopes: ["read", "write"], bucketId: bucket.id })];
      for (const id of grants) {
        const before = byId(await rows(org.admin, "/api/oauth-grants"), id);
        const revoked = await ok(org.admin.post(`/api/oauth-grants/${id}/revoke`));
        expect(before).toEqual({ ...revoked, revokedAt: null, active: true });
        expect(revoked).toMatchObject({ active: false });
        expect(byId(await rows(org.admin, "/api/oauth-grants"), id)).toEqual(revoked);
      }
    },
  },
  webhooks_list: {
    agree: async () => {
      const listed = await rows(org.admin, "/api/webhooks");
      for (const e of endpoints) expect(byId(listed, e.id)).toEqual(await ok(org.admin.get(`/api/webhooks/${e.id}`)));
      expect(byId(listed, endpoints[1]!.id)).toMatchObject({ enabled: false, disabledReason: "manual", eventTypes: ["media.created", "media.deleted"] });
    },
  },
  webhooks_deliveries_list: {
    // No delivery get: a row is held to what sending and redelivering answered, and to what the receiver got.
    agree: async () => {
      const endpoint = endpoints[0]!;
      const sent = await ok(org.admin.post(`/api/webhooks/${endpoint.id}/test`), 202);
      const path = `/api/webhooks/${endpoint.id}/deliveries`;
      const done = await eventually(
        async () => {
          const row = (await rows(org.admin, path)).find((d) => d.id === sent.deliveryId);
          return row && row.status !== "pending" ? row : undefined;
        },
        { what: "the test delivery to settle", timeoutMs: 60_000 },
      );
      const got = rx.received.filter((r) => r.id === sent.eventId);
      expect(done).toMatchObject({ id: sent.deliveryId, endpointId: endpoint.id, eventId: sent.eventId, eventType: "webhook.test", status: "succeeded" });
      expect(done.attempts).toHaveLength(got.length);
      expect(done.attempts.at(-1)).toMatchObject({ succeeded: true, statusCode: 204 });
      expect(got.at(-1)!.payload.type).toBe("webhook.test");

      const again = await ok(org.admin.post(`${path}/${sent.deliveryId}/redeliver`), 202);
      const row = await eventually(async () => (await rows(org.admin, path)).find((d) => d.id === again.id), { what: "the redelivery in the list" });
      // Its state moves on while it is delivered; what it is does not.
      const fixed = ["id", "endpointId", "eventId", "eventType", "createdAt"];
      expect(Object.fromEntries(fixed.map((k) => [k, row[k]]))).toEqual(Object.fromEntries(fixed.map((k) => [k, again[k]])));
      expect(again.eventId).toBe(sent.eventId);
      // The status filter picks rows, it does not change them.
      const settled = await eventually(
        async () => {
          const r = (await rows(org.admin, `${path}?status=succeeded`)).find((d) => d.id === again.id);
          return r;
        },
        { what: "the redelivery to succeed", timeoutMs: 60_000 },
      );
      expect(byId(await rows(org.admin, path), again.id)).toEqual(settled);
    },
  },
  trash_list: {
    // No trash get: a row is the media object as media_get answered it before the delete, plus what the trash knows.
    agree: async () => {
      const listed = await rows(org.admin, "/api/trash");
      const row = byId(listed, trashed.id);
      // Less the thumbnail's signed path: a deleted object's thumbnail is not served by it.
      const { path: _signed, ...thumbnail } = trashed.thumbnail as Row;
      expect(without(row, "deletedAt", "restorableUntil", "restorable", "blockedBy")).toEqual({ ...trashed, thumbnail });
      expect(row).toMatchObject({ restorable: true, blockedBy: null });
      expect(Date.parse(row.restorableUntil) - Date.parse(row.deletedAt)).toBe(7 * 86_400_000);
      expect(byId(await rows(org.admin, `/api/trash?bucketId=${bucket.id}`), trashed.id)).toEqual(row);
    },
  },
  audit_list: {
    // No audit get: an entry is held to the call it records (its answer, request id and credential).
    agree: async () => {
      const res = await org.admin.post("/api/buckets", { name: `audited-${crypto.randomUUID().slice(0, 8)}` });
      expect(res.status).toBe(201);
      const entry = await eventually(async () => (await ok(org.admin.get(`/api/audit?targetId=${res.body.id}`))).data[0], { what: "the audit entry" });
      expect(entry).toMatchObject({
        action: "buckets_create",
        status: 201,
        outcome: "succeeded",
        errorCode: null,
        requestId: res.headers.get("x-request-id"),
        actor: { type: "api_key", apiKeyId: org.adminKey.id, serviceCredentialId: null },
      });
      expect(entry.targets).toEqual({ id: res.body.id });
      expect((await ok(org.admin.get(`/api/audit?action=buckets_create&limit=200`))).data.find((e: Row) => e.id === entry.id)).toEqual(entry);
    },
  },
  usage_events_list: {
    // No usage event get: an upload's event is held to the media object it counts (its size, key, bucket).
    agree: async () => {
      for (const api of [org.admin, server.api.withToken(keys[0]!.secret)]) {
        const events = await eventually(
          async () => {
            const all = await rows(api, "/api/usage/events?type=upload_confirmed");
            return all.length >= 7 ? all : undefined;
          },
          { what: "the upload events" },
        );
        for (const o of api === org.admin ? [picture, paper, ...notes, elsewhere] : [picture, paper, ...notes]) {
          const single = await ok(org.admin.get(`/api/media/${o.id}`));
          const event = events.find((e) => e.objectId === o.id);
          expect(event).toMatchObject({ type: "upload_confirmed", objectId: single.id, bucketId: single.bucketId, key: single.key, bytes: single.size });
        }
        if (api !== org.admin) expect(events.some((e) => e.objectId === elsewhere.id)).toBe(false);
      }
    },
  },
  billing_invoices_list: {
    notApplicable:
      "its rows are the payment provider's invoices, passed through as the provider lists them: the service answers no single invoice and counts nothing in them (test/integration/billing.test.ts checks the rows against the provider's)",
  },
};

describe("list rows agree with the single-object answers", () => {
  test("the table has a case for every _list tool", () => {
    const lists = registry.map((t) => t.name).filter((n) => n.endsWith("_list"));
    expect(lists.length).toBeGreaterThan(10);
    expect(Object.keys(cases).sort()).toEqual(lists.sort());
  });

  for (const [tool, c] of Object.entries(cases)) {
    if ("notApplicable" in c) test.skip(`${tool}: ${c.notApplicable}`, () => {});
    else test(tool, c.agree, 120_000);
  }
});
