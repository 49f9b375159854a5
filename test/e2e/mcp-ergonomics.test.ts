import { describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { eventually } from "../support/eventually.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import { png } from "../support/media-files.ts";
import { textBlocks, toolError } from "../support/mcp-results.ts";
import { newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * What an agent reads when something is off: the first line of an error names the field, what
 * was wrong and what to send; an unknown tool says where such a tool is; resources say what a
 * read answers, the thumbnail URI a read hands out can be read, and errors carry one
 * "MCP error" prefix. Through the SDK's client over HTTP.
 */
let server: TestServer;
let org: TestOrg;
let picture: { id: string };

withServerAndOrg({
  ready: async (made) => {
    ({ server, org } = made);
    const bucket = await newBucket(org, "ergo");
    picture = await upload(org.admin, bucket.id, "ergo/red.png", await png(40, 30));
    await eventually(async () => ((await org.admin.get(`/api/media/${picture.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "thumbnail", timeoutMs: 60_000 });
  },
});

async function withClient<T>(run: (client: Client) => Promise<T>): Promise<T> {
  const client = await mcpClient(server, org.adminKey.secret, "ergonomics");
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}

describe("error texts", () => {
  test("a validation error's first line leads with the field, what was wrong and what to send", async () => {
    await withClient(async (client) => {
      const bad = await client.callTool({ name: "buckets_create", arguments: { name: 42 } });
      expect(bad.isError).toBe(true);
      const [line] = textBlocks(bad.content);
      expect(line).toStartWith("Error validation_error: name: ");
      expect(line).toContain("; send ");
      expect(line).not.toContain("Invalid input;");
      // The envelope keeps the details, field by field.
      expect(toolError(bad.content).details).toEqual([{ path: "name", message: expect.any(String) }]);
      const unknownField = await client.callTool({ name: "buckets_get", arguments: { id: picture.id, nme: "x" } });
      expect(textBlocks(unknownField.content)[0]).toMatch(/^Error validation_error: .*nme.*; send only these fields: id/);
    });
  });

  test("an unknown tool names the toolset of its prefix, or the bridge for the local-file tools", async () => {
    await withClient(async (client) => {
      const near = toolError((await client.callTool({ name: "webhooks_explode", arguments: {} })).content);
      expect(near).toMatchObject({ code: "not_found", message: expect.stringContaining("the webhooks toolset has webhooks_create, webhooks_list") });
      const local = toolError((await client.callTool({ name: "upload_files", arguments: {} })).content);
      expect(local.message).toContain("only in media mcp");
      const none = toolError((await client.callTool({ name: "frobnicate", arguments: {} })).content);
      expect(none.message).toContain("no toolset has it");
    });
  });
});

describe("resources", () => {
  test("resources/list says what a read answers; the thumbnail URI a read hands out reads as WebP", async () => {
    await withClient(async (client) => {
      const listed = (await client.listResources()).resources.find((r) => r.uri === `media://objects/${picture.id}`);
      expect(listed?.mimeType).toBe("application/json");
      const { contents } = await client.readResource({ uri: `media://objects/${picture.id}` });
      const thumbUri = contents[1]!.uri;
      expect(thumbUri).toBe(`media://objects/${picture.id}/thumbnail`);
      const thumb = await client.readResource({ uri: thumbUri });
      expect(thumb.contents).toEqual([{ uri: thumbUri, mimeType: "image/webp", blob: expect.any(String) }]);
    });
  });

  test("a resource error carries one 'MCP error -32002:' prefix, not two", async () => {
    await withClient(async (client) => {
      const err = await client.readResource({ uri: "media://nothing/here" }).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      const message = (err as Error).message;
      expect(message).toStartWith("MCP error -32002: Unknown resource media://nothing/here");
      expect(message.match(/MCP error/g)).toHaveLength(1);
      const gone = (await client.readResource({ uri: `media://objects/${crypto.randomUUID()}` }).catch((e: Error) => e)) as Error;
      expect(gone.message.match(/MCP error -32002/g)).toHaveLength(1);
    });
  });
});
