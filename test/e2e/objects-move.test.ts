import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { sql } from "drizzle-orm";
import { derivativePrefix, objectPath } from "../../domain/media/storage-keys.ts";
import { cliJsonHere, removeTempConfigHomes, runCliHere } from "../support/cli.ts";
import { eventually } from "../support/eventually.ts";
import { mcpClient, withTwoOrgs } from "../support/fixtures.ts";
import type { Api } from "../support/http.ts";
import { newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { bytesOf, pictureWithThumbnail, sha256, upload } from "../support/upload.ts";
import { startReceiver } from "../support/webhook-receiver.ts";

setDefaultTimeout(120_000);

let server: TestServer;
let org: TestOrg;
let other: TestOrg;
let bucket: { id: string; name: string };
let otherBucket: { id: string; name: string };
let mcp: Client;

withTwoOrgs({
  ready: async (made) => {
    ({ server, org, other, bucket, otherBucket } = made);
    mcp = await mcpClient(server, org.adminKey.secret);
  },
  cleanup: async () => {
    await mcp?.close();
    removeTempConfigHomes();
  },
});

const storage = () => server.services.deps.storage;

async function downloaded(api: Api, id: string): Promise<string> {
  const signed = await api.post("/api/presign/download", { objectId: id });
  expect(signed.status).toBe(200);
  return sha256(await (await fetch(signed.body.url)).arrayBuffer());
}

/** What reconcile finds wrong in the organization: stray or missing bytes, or bucket counts off. */
async function reconcileFindings(api: Api) {
  const r = await api.post("/api/reconcile", { fix: false });
  expect(r.status).toBe(200);
  return { bytesWithoutRow: r.body.bytesWithoutRow.count, rowsWithoutBytes: r.body.rowsWithoutBytes.count, buckets: r.body.usage.buckets };
}

describe("objects_move over REST", () => {
  test("a rename keeps the id, labels, metadata and thumbnail; the old key is free and its bytes gone", async () => {
    const id = await pictureWithThumbnail(org.admin, `pics-${crypto.randomUUID().slice(0, 8)}`);
    const before = (await org.admin.get(`/api/media/${id}`)).body;
    expect((await org.admin.put(`/api/objects/${id}/tags`, { add: ["keep-me"] })).status).toBe(200);
    expect((await org.admin.put(`/api/media/${id}/metadata`, { metadata: { owner: "ann" } })).status).toBe(200);
    const hash = await downloaded(org.admin, id);
    const set = (await org.admin.post("/api/sets", { name: "follows", baseObjectId: id })).body;

    const moved = await org.admin.post(`/api/media/${id}/move`, { key: "renamed/photo.png" });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id, bucketId: before.bucketId, key: "renamed/photo.png", fileName: "photo.png", size: before.size, metadata: { owner: "ann" } });
    expect(moved.body.tags.map((t: { slug: string }) => t.slug)).toEqual(["keep-me"]);
    expect(moved.body.thumbnail.state).toBe("ready");
    expect((await org.admin.get(`/api/media/${id}/thumbnail`)).status).toBe(200);
    expect(await downloaded(org.admin, id)).toBe(hash);
    expect((await org.admin.get(`/api/sets/${set.id}`)).body).toMatchObject({ baseObjectId: id, baseObjectDeleted: false });
    expect(await storage().head(objectPath(before.bucketId, before.key))).toBeNull();
    const listed = await org.admin.get(`/api/media?bucketId=${before.bucketId}`);
    expect(listed.body.data.map((m: { key: string }) => m.key)).toEqual(["renamed/photo.png"]);
    // The old key takes a new upload like any free key.
    expect((await upload(org.admin, before.bucketId, before.key, "new bytes")).id).not.toBe(id);
  });

  test("across buckets: both buckets' counts follow, the thumbnail's files move, reconcile finds nothing", async () => {
    const id = await pictureWithThumbnail(org.admin, `from-${crypto.randomUUID().slice(0, 8)}`);
    const from = (await org.admin.get(`/api/media/${id}`)).body.bucketId as string;
    const to = await newBucket(org, "to");
    const usage = (await org.admin.get("/api/usage")).body;

    const moved = await org.admin.post(`/api/media/${id}/move`, { key: "in/other.png", bucketId: to.id });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id, bucketId: to.id, key: "in/other.png" });
    expect((await org.admin.get(`/api/media?bucketId=${from}`)).body.total).toBe(0);
    expect((await org.admin.get(`/api/media?bucketId=${to.id}`)).body).toMatchObject({ total: 1, data: [{ id }] });
    const after = (await org.admin.get("/api/usage")).body;
    expect({ used: after.usedStorage, objects: after.objectCount }).toEqual({ used: usage.usedStorage, objects: usage.objectCount });
    // The thumbnail is served from the new bucket's prefix; nothing is left under the old one.
    const thumb = await org.admin.get(`/api/media/${id}/thumbnail`);
    expect(thumb.status).toBe(200);
    const left: string[] = [];
    for await (const page of storage().list(derivativePrefix(from, id))) left.push(...page.map((o) => o.key));
    expect(left).toEqual([]);
    expect(await reconcileFindings(org.admin)).toEqual({ bytesWithoutRow: 0, rowsWithoutBytes: 0, buckets: [] });
    // The emptied bucket can be deleted.
    expect((await org.admin.delete(`/api/buckets/${from}`)).status).toBe(200);
  });

  test("a taken key is 409 unless overwrite; overwrite puts the replaced object in the trash and needs delete", async () => {
    const a = await upload(org.admin, bucket.id, "taken/a.txt", "aaa");
    const b = await upload(org.admin, bucket.id, "taken/b.txt", "bbbb");
    const refused = await org.admin.post(`/api/media/${a.id}/move`, { key: "taken/b.txt" });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "conflict", details: { objectId: b.id } });
    expect(refused.body.error.message).toContain("overwrite");

    const writer = await org.keyClient(["read", "write"]);
    const noDelete = await writer.post(`/api/media/${a.id}/move`, { key: "taken/b.txt", overwrite: true });
    expect(noDelete.status).toBe(403);
    expect(noDelete.body.error.message).toContain("delete");
    expect((await org.admin.get(`/api/media/${b.id}`)).status).toBe(200);

    const replaced = await org.admin.post(`/api/media/${a.id}/move`, { key: "taken/b.txt", overwrite: true });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id: a.id, key: "taken/b.txt", size: 3 });
    expect((await org.admin.get(`/api/media/${b.id}`)).status).toBe(404);
    const trash = (await org.admin.get(`/api/trash?bucketId=${bucket.id}`)).body.data;
    expect(trash.find((t: { id: string }) => t.id === b.id)).toMatchObject({ key: "taken/b.txt", restorable: false, blockedBy: "key_in_use" });
  });

  test("reach and scopes: a read key is refused, a one-bucket key cannot move out, another organization's ids are 404", async () => {
    const obj = await upload(org.admin, bucket.id, `reach/${crypto.randomUUID()}.txt`, "reach");
    const reader = await org.keyClient(["read"]);
    expect((await reader.post(`/api/media/${obj.id}/move`, { key: "x.txt" })).status).toBe(403);

    const elsewhere = await newBucket(org, "elsewhere");
    const oneBucket = await org.keyClient(["write", "delete"], { bucketId: bucket.id });
    const out = await oneBucket.post(`/api/media/${obj.id}/move`, { key: "x.txt", bucketId: elsewhere.id });
    expect(out.status).toBe(403);
    const inside = await oneBucket.post(`/api/media/${obj.id}/move`, { key: "reach/inside.txt" });
    expect(inside.status).toBe(200);

    const stranger = await other.admin.post(`/api/media/${obj.id}/move`, { key: "stolen.txt" });
    expect(stranger.status).toBe(404);
    const own = await upload(other.admin, otherBucket.id, "mine.txt", "mine");
    const intoForeign = await other.admin.post(`/api/media/${own.id}/move`, { key: "mine.txt", bucketId: bucket.id });
    expect(intoForeign.status).toBe(404);
    expect((await org.admin.get(`/api/media/${obj.id}`)).body.key).toBe("reach/inside.txt");
  });

  test("bad keys are 400 and change nothing", async () => {
    const obj = await upload(org.admin, bucket.id, `bad/${crypto.randomUUID()}.txt`, "bad");
    for (const key of ["/lead", "a/../b", ""]) {
      const r = await org.admin.post(`/api/media/${obj.id}/move`, { key });
      expect({ key, status: r.status, code: r.body.error.code }).toEqual({ key, status: 400, code: "validation_error" });
    }
    expect((await org.admin.get(`/api/media/${obj.id}`)).body.key).toBe(obj.key);
  });

  test("two objects moved to one key at once: one wins, the other is 409, and the key holds the winner's bytes", async () => {
    const a = await upload(org.admin, bucket.id, `race/${crypto.randomUUID()}.bin`, bytesOf(3000, 1));
    const b = await upload(org.admin, bucket.id, `race/${crypto.randomUUID()}.bin`, bytesOf(3000, 2));
    const [ra, rb] = await Promise.all([a, b].map((o) => org.admin.post(`/api/media/${o.id}/move`, { key: "race/same.bin" })));
    expect([ra!.status, rb!.status].sort()).toEqual([200, 409]);
    const winner = ra!.status === 200 ? a : b;
    const seed = winner === a ? 1 : 2;
    expect(await downloaded(org.admin, winner.id)).toBe(sha256(bytesOf(3000, seed)));
    const loser = winner === a ? b : a;
    expect((await org.admin.get(`/api/media/${loser.id}`)).body.key).toBe(loser.key);
    expect(await downloaded(org.admin, loser.id)).toBe(sha256(bytesOf(3000, 3 - seed)));
  });

  test("a retry with the same Idempotency-Key replays the answer", async () => {
    const obj = await upload(org.admin, bucket.id, `retry/${crypto.randomUUID()}.txt`, "retry");
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await org.admin.post(`/api/media/${obj.id}/move`, { key: "retry/moved.txt" }, headers);
    const again = await org.admin.post(`/api/media/${obj.id}/move`, { key: "retry/moved.txt" }, headers);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    // Without the header a repeat finds the object at its new key: the same answer, nothing moves.
    const repeat = await org.admin.post(`/api/media/${obj.id}/move`, { key: "retry/moved.txt" });
    expect(repeat.body).toMatchObject({ id: obj.id, key: "retry/moved.txt" });
  });

  test("when the catalogue refuses the change after the copy, the object stays where it was and the copy is taken back", async () => {
    const obj = await upload(org.admin, bucket.id, `crash/${crypto.randomUUID()}.bin`, bytesOf(4096));
    const db = server.services.deps.db;
    // A failure of the database at the last step, as a crash or a lost connection would make it.
    await db.execute(sql`create or replace function refuse_boom_keys() returns trigger language plpgsql as $$
      begin if new.key like 'boom/%' then raise exception 'refused for the test'; end if; return new; end $$`);
    await db.execute(sql`create trigger refuse_boom_keys before update on media_objects for each row execute function refuse_boom_keys()`);
    try {
      const r = await org.admin.post(`/api/media/${obj.id}/move`, { key: "boom/x.bin" });
      expect(r.status).toBe(500);
    } finally {
      await db.execute(sql`drop trigger refuse_boom_keys on media_objects`);
      await db.execute(sql`drop function refuse_boom_keys()`);
    }
    expect((await org.admin.get(`/api/media/${obj.id}`)).body).toMatchObject({ key: obj.key, size: 4096 });
    expect(await downloaded(org.admin, obj.id)).toBe(sha256(bytesOf(4096)));
    expect(await storage().head(objectPath(bucket.id, "boom/x.bin"))).toBeNull();
  });

  test("webhook endpoints hear of a move as media.updated with changes [key], naming the new place", async () => {
    const rx = startReceiver();
    try {
      const hook = await org.admin.post("/api/webhooks", { url: rx.url, eventTypes: ["media.updated"] });
      expect(hook.status).toBe(201);
      const obj = await upload(org.admin, bucket.id, `hooked/${crypto.randomUUID()}.txt`, "hooked");
      const to = await newBucket(org, "hooked");
      expect((await org.admin.post(`/api/media/${obj.id}/move`, { key: "hooked/there.txt", bucketId: to.id })).status).toBe(200);
      const [event] = await eventually(async () => (rx.ofType("media.updated").length ? rx.ofType("media.updated") : undefined), { what: "media.updated" });
      expect(event!.payload.data).toEqual({ objectId: obj.id, bucketId: to.id, key: "hooked/there.txt", changes: ["key"] });
      expect((await org.admin.delete(`/api/webhooks/${hook.body.id}`)).status).toBe(200);
    } finally {
      rx.stop();
    }
  });

  test("old bytes a failed delete left behind are found and deleted by reconcile", async () => {
    const obj = await upload(org.admin, bucket.id, `left/${crypto.randomUUID()}.bin`, bytesOf(2048));
    expect((await org.admin.post(`/api/media/${obj.id}/move`, { key: `left/moved-${crypto.randomUUID()}.bin` })).status).toBe(200);
    // As if the delete after the move had failed: the old bytes are back at the old key.
    await storage().put(objectPath(bucket.id, obj.key), bytesOf(2048), { contentType: "application/octet-stream" });
    const found = await org.admin.post("/api/reconcile", { fix: true, olderThanHours: 0 });
    expect(found.body.bytesWithoutRow.samples.map((s: { path: string }) => s.path)).toContain(objectPath(bucket.id, obj.key));
    expect(await storage().head(objectPath(bucket.id, obj.key))).toBeNull();
    expect(await downloaded(org.admin, obj.id)).toBe(sha256(bytesOf(2048)));
  });
});

describe("objects_move over MCP and the CLI", () => {
  test("MCP: the tool moves and answers the object", async () => {
    const obj = await upload(org.admin, bucket.id, `mcp/${crypto.randomUUID()}.txt`, "mcp");
    const result = await mcp.callTool({ name: "objects_move", arguments: { id: obj.id, key: "mcp/moved.txt" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ id: obj.id, key: "mcp/moved.txt" });
    const other = await upload(org.admin, bucket.id, `mcp/${crypto.randomUUID()}.txt`, "other");
    const conflict = await mcp.callTool({ name: "objects_move", arguments: { id: other.id, key: "mcp/moved.txt" } });
    expect(conflict.isError).toBe(true);
    expect(JSON.stringify(conflict.content)).toContain("conflict");
  });

  test("CLI: media objects move <id> --key", async () => {
    const obj = await upload(org.admin, bucket.id, `cli/${crypto.randomUUID()}.txt`, "cli");
    const base = { url: server.url, key: org.adminKey.secret };
    const moved = await cliJsonHere(["objects", "move", obj.id, "--key", "cli/moved.txt"], base);
    expect(moved).toMatchObject({ id: obj.id, key: "cli/moved.txt" });
    const reader = await org.keyClient(["read"]);
    const refused = await runCliHere(["objects", "move", obj.id, "--key", "cli/again.txt"], { url: server.url, key: reader.secret });
    expect(refused.code).not.toBe(0);
    expect((await org.admin.get(`/api/media/${obj.id}`)).body.key).toBe("cli/moved.txt");
  });
});
