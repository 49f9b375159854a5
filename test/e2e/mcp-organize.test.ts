import { describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { insertObject, newBucket } from "../support/objects.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { toolError } from "../support/mcp-results.ts";

let server: TestServer;
let org: TestOrg;
let client: Client;
let bucket: { id: string };

withServerAndOrg({
  ready: async (made) => {
    ({ server, org } = made);
    bucket = await newBucket(org);
    client = await mcpClient(server, org.adminKey.secret, "e2e-organize");
    // Listing makes the client validate every later result against the tool's outputSchema.
    await client.listTools();
  },
  cleanup: () => client?.close(),
});

// The client checks structuredContent against each tool's outputSchema (cached by listTools), so these also prove
// that the schemas (the recursive category tree included) describe what the tools return.
async function call<T = Record<string, unknown>>(name: string, args: Record<string, unknown>): Promise<T> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

describe("organizing over MCP", () => {
  test("tags: create, set on an object, list", async () => {
    const obj = await insertObject(server, org, bucket.id);
    const tag = await call<{ id: string; slug: string }>("tags_create", { name: "From MCP" });
    expect(tag.slug).toBe("from-mcp");
    const set = await call<{ tags: { id: string }[] }>("objects_set_tags", { id: obj.id, tagIds: [tag.id] });
    expect(set.tags.map((t) => t.id)).toEqual([tag.id]);
    const listed = await call<{ data: { id: string; objectCount: number }[] }>("tags_list", { search: "mcp" });
    expect(listed.data).toEqual([expect.objectContaining({ id: tag.id, objectCount: 1 })]);
    // REST sees the same state
    expect((await org.admin.get("/api/tags?search=mcp")).body.data[0].id).toBe(tag.id);
  });

  test("categories: the nested tree comes back as structured content", async () => {
    const root = await call<{ id: string }>("categories_create", { name: "MCP root" });
    await call("categories_create", { name: "MCP child", parentId: root.id });
    const tree = await call<{ data: { name: string; children: { name: string }[] }[] }>("categories_list", {});
    expect(tree.data.find((n) => n.name === "MCP root")!.children.map((c) => c.name)).toEqual(["MCP child"]);
  });

  test("sets: create, add an item, generate", async () => {
    const base = await insertObject(server, org, bucket.id);
    const s = await call<{ id: string }>("sets_create", { name: "MCP set", baseObjectId: base.id });
    await call("sets_add_item", { id: s.id, aspectRatio: "1:1", width: 512, height: 512, role: "thumbnail" });
    const accepted = await call<{ status: string; items: number }>("sets_generate", { id: s.id });
    expect(accepted).toMatchObject({ status: "queued", items: 1 });
  });

  test("storyboards: create, add clips, reorder; a bad reorder is a validation_error tool result", async () => {
    const sb = await call<{ id: string }>("storyboards_create", { name: "MCP board" });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const obj = await insertObject(server, org, bucket.id);
      ids.push((await call<{ id: string }>("storyboards_add_clip", { id: sb.id, objectId: obj.id })).id);
    }
    const reordered = await call<{ clips: { id: string; position: number }[] }>("storyboards_reorder_clips", { id: sb.id, clipIds: [...ids].reverse() });
    expect(reordered.clips.map((c) => c.id)).toEqual([...ids].reverse());
    const bad = await client.callTool({ name: "storyboards_reorder_clips", arguments: { id: sb.id, clipIds: [ids[0], ids[0], ids[1]] } });
    expect(bad.isError).toBe(true);
    const error = toolError(bad.content);
    expect(error.code).toBe("validation_error");
    expect(error.details).toContainEqual({ path: "clipIds.1", message: "Duplicate of clipIds.0" });
  });
});
