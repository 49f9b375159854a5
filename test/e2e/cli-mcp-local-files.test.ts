import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { registry } from "../../tools/registry.ts";
import { CLI, cliEnv, removeTempConfigHomes } from "../support/cli.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import { toolError } from "../support/mcp-results.ts";
import { newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";

// One pass: the bridge's local files and roots do not depend on the database.

/**
 * Local files through `media mcp`: upload_files and download_to exist only in the stdio
 * bridge, stream with the CLI's transfer code and reach only into the roots (the client's
 * MCP roots, or --root); anything else, through `..` or a symlink too, is refused. Through
 * the SDK's stdio client, as a desktop agent runs it.
 */
setDefaultTimeout(120_000);

let server: TestServer;
let org: TestOrg;
withServerAndOrg({ ready: (made) => void ({ server, org } = made), cleanup: removeTempConfigHomes });

const base = mkdtempSync(join(tmpdir(), "media-mcp-files-"));
const root = join(base, "root");
const elsewhere = join(base, "elsewhere");
mkdirSync(join(root, "shoot", "day2"), { recursive: true });
mkdirSync(join(root, "downloads"), { recursive: true });
mkdirSync(elsewhere, { recursive: true });
writeFileSync(join(root, "one.txt"), "one file");
writeFileSync(join(root, "shoot", "a.txt"), "a");
writeFileSync(join(root, "shoot", "day2", "b.txt"), "bb");
writeFileSync(join(elsewhere, "secret.txt"), "not for the agent");
symlinkSync(join(elsewhere, "secret.txt"), join(root, "link-out.txt"));
symlinkSync(elsewhere, join(root, "downloads", "out-dir"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function bridge(flags: string[], roots: string[] | null = null): Promise<Client> {
  const client = new Client({ name: "desktop-agent", version: "1" }, roots ? { capabilities: { roots: { listChanged: true } } } : {});
  if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots.map((r) => ({ uri: pathToFileURL(r).href, name: "r" })) }));
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", ...flags], env: cliEnv({ url: server.url, key: org.adminKey.secret }), stderr: "pipe" }));
  return client;
}

const refusal = (raw: unknown) => {
  const result = raw as { isError?: boolean; content: unknown };
  expect(result.isError).toBe(true);
  return toolError(result.content);
};

describe("listed only by the bridge", () => {
  test("upload_files and download_to follow the remote tools over stdio, and /mcp does not list them", async () => {
    const client = await bridge(["--root", root]);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual([...registry.map((t) => t.name), "upload_files", "download_to"]);
    } finally {
      await client.close();
    }
    const remote = await mcpClient(server, org.adminKey.secret, "remote");
    try {
      expect((await remote.listTools()).tools.map((t) => t.name)).not.toContain("upload_files");
    } finally {
      await remote.close();
    }
    const readOnly = await bridge(["--root", root, "--read-only"]);
    try {
      expect((await readOnly.listTools()).tools.map((t) => t.name)).not.toContain("upload_files");
    } finally {
      await readOnly.close();
    }
  });
});

describe("inside --root", () => {
  test("a file and a directory upload, with progress; download_to writes the bytes back and will not overwrite unasked", async () => {
    const bucket = await newBucket(org);
    const client = await bridge(["--root", root]);
    try {
      const progress: number[] = [];
      const result = await client.request(
        { method: "tools/call", params: { name: "upload_files", arguments: { paths: [join(root, "one.txt"), join(root, "shoot")], bucket: bucket.name, prefix: "local", tags: ["From Disk"] } } },
        CallToolResultSchema,
        { onprogress: (p) => void progress.push(p.progress) },
      );
      expect(result.isError).toBeFalsy();
      const out = result.structuredContent as { uploaded: { key: string; id: string; size: number }[]; failed: unknown[] };
      expect(out.failed).toEqual([]);
      expect(out.uploaded.map((u) => [u.key, u.size])).toEqual([["local/one.txt", 8], ["local/a.txt", 1], ["local/day2/b.txt", 2]]);
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.every((p, i) => i === 0 || p > progress[i - 1]!)).toBe(true);
      const stored = (await org.admin.get(`/api/media/${out.uploaded[0]!.id}`)).body as { key: string; tags: { name: string }[] };
      expect(stored.key).toBe("local/one.txt");
      expect(stored.tags.map((t) => t.name)).toEqual(["From Disk"]);

      const id = out.uploaded[0]!.id;
      const down = await client.callTool({ name: "download_to", arguments: { id, path: join(root, "downloads") } });
      expect(down.isError).toBeFalsy();
      expect(down.structuredContent).toMatchObject({ key: "local/one.txt", size: 8, file: join(root, "downloads", "one.txt") });
      expect(readFileSync(join(root, "downloads", "one.txt"), "utf8")).toBe("one file");
      const again = await client.callTool({ name: "download_to", arguments: { id, path: join(root, "downloads", "one.txt") } });
      expect(refusal(again)).toMatchObject({ code: "conflict", message: expect.stringMatching(/^path: .* exists; send overwrite: true/) });
      const forced = await client.callTool({ name: "download_to", arguments: { id, path: "downloads/one.txt", overwrite: true } });
      expect(forced.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  test("anything outside is refused with a clear message: another directory, .., a symlink out, a directory holding one", async () => {
    const bucket = await newBucket(org);
    const client = await bridge(["--root", root]);
    try {
      const upload = (paths: string[]) => client.callTool({ name: "upload_files", arguments: { paths, bucket: bucket.name } });
      for (const paths of [[join(elsewhere, "secret.txt")], [join(root, "..", "elsewhere", "secret.txt")], ["../elsewhere/secret.txt"], [join(root, "link-out.txt")], [root]]) {
        const e = refusal(await upload(paths));
        expect({ paths, code: e.code }).toEqual({ paths, code: "forbidden" });
        expect(e.message).toContain("is outside the allowed roots");
        expect(e.message).toContain("--root");
      }
      const objects = (await org.admin.get(`/api/media?bucketId=${bucket.id}`)).body as { total: number };
      expect(objects.total).toBe(0);

      const [object] = (await org.admin.get("/api/media?limit=1")).body.data as { id: string }[];
      for (const path of [join(elsewhere, "x.txt"), join(root, "downloads", "out-dir"), join(root, "downloads", "out-dir", "x.txt"), join(root, "..", "x.txt")]) {
        const e = refusal(await client.callTool({ name: "download_to", arguments: { id: object!.id, path } }));
        expect({ path, code: e.code, outside: e.message.includes("is outside the allowed roots") }).toEqual({ path, code: "forbidden", outside: true });
      }
      expect(() => readFileSync(join(elsewhere, "x.txt"))).toThrow();
    } finally {
      await client.close();
    }
  });
});

describe("the client's roots", () => {
  test("roots/list decides where the tools reach when no --root is given; without any root the tools say how to get one", async () => {
    const bucket = await newBucket(org);
    const client = await bridge([], [join(root, "shoot")]);
    try {
      const inside = await client.callTool({ name: "upload_files", arguments: { paths: [join(root, "shoot", "a.txt")], bucket: bucket.id } });
      expect(inside.isError).toBeFalsy();
      const e = refusal(await client.callTool({ name: "upload_files", arguments: { paths: [join(root, "one.txt")], bucket: bucket.id } }));
      expect(e.code).toBe("forbidden");
    } finally {
      await client.close();
    }
    const none = await bridge([]);
    try {
      const e = refusal(await none.callTool({ name: "upload_files", arguments: { paths: [join(root, "one.txt")], bucket: bucket.id } }));
      expect(e).toMatchObject({ code: "forbidden", message: expect.stringContaining("--root <dir>") });
    } finally {
      await none.close();
    }
  });
});
