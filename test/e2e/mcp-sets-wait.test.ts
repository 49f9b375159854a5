import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { awaitGeneration } from "../../domain/collections/sets.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import { textBlocks } from "../support/mcp-results.ts";
import { png } from "../support/media-files.ts";
import { insertObject, newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";

/**
 * sets_generate with wait: the call answers once every generated item is made or failed, with
 * progress notifications (items settled of the total) when the client sent a progress token.
 */
setDefaultTimeout(60_000);

let server: TestServer;
let org: TestOrg;
let bucket: { id: string };
let client: Client;

withServerAndOrg({
  ready: async (made) => {
    ({ server, org } = made);
    bucket = await newBucket(org, "renditions");
    client = await mcpClient(server, org.adminKey.secret, "sets-wait");
    // Listed, so the client checks every structuredContent against sets_generate's outputSchema.
    await client.listTools();
  },
  cleanup: () => client?.close(),
});

type Rendition = { itemId: string; role: string; state: string; objectId: string | null; error: string | null };
type Generation = { setId: string; status: string; items: number; renditions?: Rendition[] };

const ITEMS = [
  { aspectRatio: "1:1", width: 64, height: 64, role: "square" },
  { aspectRatio: "16:9", width: 160, height: 90, role: "hero" },
  { aspectRatio: "9:16", width: 90, height: 160, role: "story" },
];

/** A set over `bytes` (a PNG unless they are not one) with the three generated items. */
async function setOver(bytes: Uint8Array): Promise<string> {
  const base = await insertObject(server, org, bucket.id, { bytes, contentType: "image/png" });
  const set = (await org.admin.post("/api/sets", { name: "waited", baseObjectId: base.id })).body;
  for (const item of ITEMS) expect((await org.admin.post(`/api/sets/${set.id}/items`, item)).status).toBe(201);
  return set.id;
}

describe("sets_generate with wait", () => {
  test("over MCP with a progress token: items settled of the total, then every item made", async () => {
    const setId = await setOver(await png(320, 240));
    const progress: { progress: number; total?: number }[] = [];
    const result = await client.request(
      { method: "tools/call", params: { name: "sets_generate", arguments: { id: setId, wait: true } } },
      CallToolResultSchema,
      { onprogress: (p) => void progress.push(p) },
    );
    expect(result.isError).toBeFalsy();
    const done = result.structuredContent as Generation;
    expect(done).toMatchObject({ setId, status: "settled", items: 3 });
    expect(textBlocks(result.content)[0]).toBe(`Generation of set ${setId} settled: 3 made, 0 failed, 0 pending of 3`);
    expect(done.renditions!.map((r) => [r.role, r.state, r.error])).toEqual([
      ["square", "made", null],
      ["hero", "made", null],
      ["story", "made", null],
    ]);
    // Each rendition is the item's objectId now.
    const set = (await org.admin.get(`/api/sets/${setId}`)).body as { items: { id: string; objectId: string }[] };
    expect(done.renditions!.map((r) => r.objectId)).toEqual(set.items.map((i) => i.objectId));
    // Increasing counts of the 3 items (the first "started" notice counts the call, of 1); the
    // last one may be lost by the client when it arrives with the result (docs/mcp.md).
    expect(progress.length).toBeGreaterThan(1);
    const own = progress.filter((p) => p.total === 3);
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((p, i) => p.progress <= 3 && (i === 0 || p.progress > own[i - 1]!.progress))).toBe(true);
  });

  test("a base that cannot be decoded: every item failed, with why", async () => {
    const setId = await setOver(new TextEncoder().encode("not a picture at all"));
    const result = await client.callTool({ name: "sets_generate", arguments: { id: setId, wait: true } });
    expect(result.isError).toBeFalsy();
    const done = result.structuredContent as Generation;
    expect(done.status).toBe("settled");
    expect(done.renditions!.map((r) => r.state)).toEqual(["failed", "failed", "failed"]);
    expect(done.renditions!.every((r) => r.objectId === null && (r.error ?? "").length > 0)).toBe(true);
    // The summary gives the one reason once, with the items it failed.
    expect(textBlocks(result.content)[0]).toStartWith(`Generation of set ${setId} settled: 0 made, 3 failed, 0 pending of 3; square, hero, story: `);
    // An agent that polls instead of waiting sees the same reasons on the set's items.
    const set = (await org.admin.get(`/api/sets/${setId}`)).body as { items: { renderError: string | null }[] };
    expect(set.items.map((i) => i.renderError)).toEqual(done.renditions!.map((r) => r.error));
  });

  test("REST: POST /api/sets/{id}/generate with wait answers the settled items; without it, queued at once", async () => {
    const setId = await setOver(await png(200, 200));
    const queued = await org.admin.post(`/api/sets/${setId}/generate`, {});
    expect(queued.status).toBe(202);
    expect(queued.body).toEqual({ setId, jobId: expect.any(String), status: "queued", items: 3 });
    const waited = await org.admin.post(`/api/sets/${setId}/generate`, { wait: true });
    expect(waited.status).toBe(202);
    expect(waited.body).toMatchObject({ setId, status: "settled", items: 3 });
    expect((waited.body as Generation).renditions!.map((r) => r.state)).toEqual(["made", "made", "made"]);
  });

  test("the wait ends at its deadline with what is settled so far: timed_out, the rest pending", async () => {
    const setId = await setOver(await png(100, 100));
    const set = (await org.admin.get(`/api/sets/${setId}`)).body as { items: { id: string }[] };
    // Nothing was queued for these items, so nothing settles them.
    const seen: number[] = [];
    const answer = await awaitGeneration(
      server.services.deps,
      { setId, jobId: crypto.randomUUID(), status: "queued", items: 3, itemIds: set.items.map((i) => i.id) },
      { orgId: org.orgId, deadline: Date.now() + 300, onProgress: (done) => void seen.push(done), pollMs: 50 },
    );
    expect(answer).toMatchObject({ setId, status: "timed_out", items: 3 });
    expect(answer.renditions!.map((r) => r.state)).toEqual(["pending", "pending", "pending"]);
    expect(seen).toEqual([0]);
  });
});
