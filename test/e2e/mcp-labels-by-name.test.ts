import { describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { eventually } from "../support/eventually.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import { textBlocks, toolError } from "../support/mcp-results.ts";
import { newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * One rule wherever a tag or category is named: its slug, its name (any case) or its id. And
 * one call adds or removes tags by name, creating the missing ones. Through the SDK's client.
 */
let server: TestServer;
let org: TestOrg;
withServerAndOrg({ ready: (made) => void ({ server, org } = made) });

async function withClient<T>(run: (call: (name: string, args: Record<string, unknown>) => Promise<any>, client: Client) => Promise<T>): Promise<T> {
  const client = await mcpClient(server, org.adminKey.secret, "labels");
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(textBlocks(r.content)[0]);
    return r.structuredContent;
  };
  try {
    return await run(call, client);
  } finally {
    await client.close();
  }
}

describe("objects_set_tags add and remove", () => {
  test("one call adds tags by name (creating them) and removes by slug, name or id; a repeat changes nothing", async () => {
    const bucket = await newBucket(org);
    const object = (await upload(org.admin, bucket.id, "hour.txt", "golden")) as { id: string };
    await withClient(async (call, client) => {
      const added = await call("objects_set_tags", { id: object.id, add: ["Golden Hour", "Beach", "sunset"] });
      expect(added.tags.map((t: { name: string; slug: string }) => t.slug)).toEqual(["beach", "golden-hour", "sunset"]);
      const again = await call("objects_set_tags", { id: object.id, add: ["golden hour", "BEACH"] });
      expect(again.tags.map((t: { slug: string }) => t.slug)).toEqual(["beach", "golden-hour", "sunset"]);
      const sunsetId = added.tags.find((t: { slug: string }) => t.slug === "sunset").id;
      const removed = await call("objects_set_tags", { id: object.id, remove: ["golden-hour", "Beach", sunsetId, "never-existed"], add: ["Blue Hour"] });
      expect(removed.tags.map((t: { slug: string }) => t.slug)).toEqual(["blue-hour"]);
      const both = await client.callTool({ name: "objects_set_tags", arguments: { id: object.id, tagIds: [], add: ["x"] } });
      expect(toolError(both.content)).toMatchObject({ code: "validation_error", message: expect.stringContaining("not both") });
      const unknownId = await client.callTool({ name: "objects_set_tags", arguments: { id: object.id, add: [crypto.randomUUID()] } });
      expect(textBlocks(unknownId.content)[0]).toStartWith("Error validation_error: add.0: No tag has the id");
    });
  });
});

describe("filters take a slug, a name or an id", () => {
  test("media_list and search find the same objects whichever way the tag or category is named", async () => {
    const bucket = await newBucket(org);
    const object = (await upload(org.admin, bucket.id, "filtered.txt", "golden filter")) as { id: string };
    await withClient(async (call) => {
      const { tags } = await call("objects_set_tags", { id: object.id, add: ["Golden Filter"] });
      const category = await call("categories_create", { name: "Evening Light" });
      await call("objects_set_categories", { id: object.id, categoryIds: [category.id] });
      for (const tag of ["Golden Filter", "golden filter", "golden-filter", tags[0].id]) {
        const listed = await call("media_list", { bucketId: bucket.id, tags: tag });
        expect({ tag, ids: listed.data.map((o: { id: string }) => o.id) }).toEqual({ tag, ids: [object.id] });
      }
      for (const c of ["Evening Light", "evening-light", category.id]) {
        const listed = await call("media_list", { bucketId: bucket.id, categories: c });
        expect({ c, ids: listed.data.map((o: { id: string }) => o.id) }).toEqual({ c, ids: [object.id] });
      }
      expect((await call("media_list", { bucketId: bucket.id, tags: "No Such Tag" })).data).toEqual([]);
      for (const tag of ["Golden Filter", tags[0].id]) {
        const found = await eventually(async () => {
          const r = await call("search", { q: "filtered", tags: tag, categories: "Evening Light" });
          return r.media.length > 0 ? r : undefined;
        }, { what: `search by ${tag}` });
        expect(found.media.map((o: { id: string }) => o.id)).toEqual([object.id]);
      }
    });
  });
});
