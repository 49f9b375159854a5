import { describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI, cliEnv, removeTempConfigHomes } from "../support/cli.ts";
import { CallToolResultSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { eventually } from "../support/eventually.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import { png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/** Media objects as MCP resources, completions, logging and progress, through the SDK's client over HTTP. */
let server: TestServer;
let org: TestOrg;
let bucket: { id: string; name: string };
let picture: { id: string; key: string };

withServerAndOrg({
  ready: async (made) => {
    ({ server, org } = made);
    bucket = await newBucket(org, "res");
    picture = await upload(org.admin, bucket.id, "photos/2026/red.png", await png(64, 48), { tags: ["sunset"] });
    for (let i = 0; i < 55; i++) await upload(org.admin, bucket.id, `notes/n${String(i).padStart(2, "0")}.txt`, `note ${i}`);
    // the thumbnail is made by the worker
    await eventually(async () => ((await org.admin.get(`/api/media/${picture.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "thumbnail", timeoutMs: 60_000 });
  },
  cleanup: removeTempConfigHomes,
});

const connect = (): Promise<Client> => mcpClient(server, org.adminKey.secret, "resources");

describe("resources", () => {
  test("templates name objects by id, by bucket and key, and by tag", async () => {
    const client = await connect();
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["media://objects/{id}", "media://buckets/{bucket}/{+key}", "media://tags/{slug}"]);
    await client.close();
  });

  test("resources/list pages with a cursor", async () => {
    const client = await connect();
    const first = await client.listResources();
    expect(first.resources).toHaveLength(50);
    expect(first.nextCursor).toBeString();
    const second = await client.listResources({ cursor: first.nextCursor });
    expect(second.resources).toHaveLength(6);
    expect(second.nextCursor).toBeUndefined();
    const all = [...first.resources, ...second.resources];
    expect(new Set(all.map((r) => r.uri)).size).toBe(56);
    // What a read answers first (the JSON; the thumbnail follows), not the stored file's type.
    expect(all.find((r) => r.name === "photos/2026/red.png")).toMatchObject({ uri: `media://objects/${picture.id}`, mimeType: "application/json" });
    await expect(client.listResources({ cursor: "nonsense" })).rejects.toThrow(/Invalid cursor/);
    await client.close();
  });

  test("resources/read gives the object's JSON and its thumbnail as an image blob", async () => {
    const client = await connect();
    const { contents } = await client.readResource({ uri: `media://objects/${picture.id}` });
    expect(contents[0]).toMatchObject({ uri: `media://objects/${picture.id}`, mimeType: "application/json" });
    expect(JSON.parse((contents[0] as { text: string }).text)).toMatchObject({ id: picture.id, key: "photos/2026/red.png" });
    expect(contents[1]).toMatchObject({ uri: `media://objects/${picture.id}/thumbnail`, mimeType: "image/webp" });
    const webp = Buffer.from((contents[1] as { blob: string }).blob, "base64");
    expect(webp.subarray(8, 12).toString()).toBe("WEBP");

    const byKey = await client.readResource({ uri: `media://buckets/${bucket.name}/photos/2026/red.png` });
    expect(JSON.parse((byKey.contents[0] as { text: string }).text).id).toBe(picture.id);
    const tagged = await client.readResource({ uri: "media://tags/sunset" });
    expect(JSON.parse((tagged.contents[0] as { text: string }).text).data.map((o: { id: string }) => o.id)).toEqual([picture.id]);

    await expect(client.readResource({ uri: `media://objects/${crypto.randomUUID()}` })).rejects.toThrow(/not found/i);
    await expect(client.readResource({ uri: "media://elsewhere/x" })).rejects.toThrow(/Unknown resource/);
    await client.close();
  });

  test("a key restricted to another bucket cannot read the object: resource not found (-32002), as docs/mcp.md says", async () => {
    const other = await newBucket(org, "other");
    const key = await org.keyClient(["read"], { bucketId: other.id });
    const client = await mcpClient(server, key.secret, "restricted");
    for (const uri of [`media://objects/${picture.id}`, `media://buckets/${bucket.name}/photos/2026/red.png`]) {
      const refused = await client.readResource({ uri }).then(
        () => null,
        (err: { code?: number; data?: unknown }) => err,
      );
      expect({ uri, code: refused?.code }).toEqual({ uri, code: -32002 });
    }
    // An object of no organization's is the same answer.
    await expect(client.readResource({ uri: `media://objects/${crypto.randomUUID()}` })).rejects.toMatchObject({ code: -32002 });
    expect((await client.listResources()).resources).toEqual([]);
    await client.close();
  });
});

describe("completions", () => {
  test("bucket names, keys by prefix within the bucket chosen, tag slugs", async () => {
    const client = await connect();
    const ref = (uri: string) => ({ type: "ref/resource" as const, uri });
    const buckets = await client.complete({ ref: ref("media://buckets/{bucket}/{+key}"), argument: { name: "bucket", value: "res" } });
    expect(buckets.completion.values).toEqual([bucket.name]);
    const keys = await client.complete({ ref: ref("media://buckets/{bucket}/{+key}"), argument: { name: "key", value: "photos/" }, context: { arguments: { bucket: bucket.name } } });
    expect(keys.completion.values).toEqual(["photos/2026/red.png"]);
    const many = await client.complete({ ref: ref("media://buckets/{bucket}/{+key}"), argument: { name: "key", value: "notes/n0" }, context: { arguments: { bucket: bucket.name } } });
    expect(many.completion.values).toHaveLength(10);
    const slugs = await client.complete({ ref: ref("media://tags/{slug}"), argument: { name: "slug", value: "sun" } });
    expect(slugs.completion.values).toEqual(["sunset"]);
    await client.close();
  });
});

describe("logging and progress", () => {
  test("logging/setLevel is accepted", async () => {
    const client = await connect();
    await expect(client.setLoggingLevel("warning")).resolves.toEqual({});
    await client.close();
  });

  test("a tool call with a progress token gets progress and a log notice before its result", async () => {
    const client = await connect();
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    const progress: { progress: number; total?: number }[] = [];
    const result = await client.request(
      { method: "tools/call", params: { name: "media_get", arguments: { id: picture.id } } },
      CallToolResultSchema,
      { onprogress: (p) => void progress.push(p) },
    );
    expect(result.structuredContent).toMatchObject({ id: picture.id });
    // 0 at the start, 0.5 running, 0.9 answered, 1 at the end; the client may lose the last one
    // when it reads it together with the result (it handles notifications a tick later, and
    // forgets the token at the result).
    expect(progress.map((p) => p.progress)).toEqual([0, 0.5, 0.9, 1].slice(0, progress.length));
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(logs.at(-1)).toEqual({ level: "info", logger: "media-storage", data: { tool: "media_get", requestId: expect.any(String), ms: expect.any(Number), ok: true } });
    await client.close();
  });
});

describe("over stdio (media mcp)", () => {
  test("templates, pages, reads with the thumbnail, completions and logging reach a desktop agent through the bridge", async () => {
    const client = new Client({ name: "desktop-agent", version: "1" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp"], env: cliEnv({ url: server.url, key: org.adminKey.secret }), stderr: "pipe" }));
    try {
      expect((await client.listResourceTemplates()).resourceTemplates).toHaveLength(3);
      const first = await client.listResources();
      expect((await client.listResources({ cursor: first.nextCursor })).resources).toHaveLength(6);
      const { contents } = await client.readResource({ uri: `media://buckets/${bucket.name}/photos/2026/red.png` });
      expect(contents.map((c) => c.mimeType)).toEqual(["application/json", "image/webp"]);
      const keys = await client.complete({ ref: { type: "ref/resource", uri: "media://buckets/{bucket}/{+key}" }, argument: { name: "key", value: "photos/" }, context: { arguments: { bucket: bucket.name } } });
      expect(keys.completion.values).toEqual(["photos/2026/red.png"]);
      await expect(client.setLoggingLevel("info")).resolves.toEqual({});
    } finally {
      await client.close();
    }
  });
});
