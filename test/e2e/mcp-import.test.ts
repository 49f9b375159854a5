import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI, cliEnv, removeTempConfigHomes } from "../support/cli.ts";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { eq } from "drizzle-orm";
import { orgUsage } from "../../db/schema/index.ts";
import { eventually } from "../support/eventually.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import { png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * media_import: the service fetches a URL into a bucket as a job. The first server may reach
 * loopback (IMPORT_ALLOW_PRIVATE, as in development) so it can fetch from this test's file
 * server; test/integration/imports-refused.test.ts has a server configured as in production.
 */
setDefaultTimeout(120_000);

let picture: Uint8Array<ArrayBuffer>;
const files = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const url = new URL(request.url);
    const hop = /^\/redirect\/(\d+)$/.exec(url.pathname);
    if (hop) return new Response(null, { status: 302, headers: { location: Number(hop[1]) === 0 ? "/photo.png" : `/redirect/${Number(hop[1]) - 1}` } });
    switch (url.pathname) {
      case "/photo.png":
        return new Response(picture, { headers: { "content-type": "image/png" } });
      case "/page":
        return new Response("<html><body>not a file</body></html>", { headers: { "content-type": "text/html; charset=utf-8" } });
      case "/big":
        return new Response("x".repeat(20_000), { headers: { "content-type": "application/octet-stream" } });
      case "/huge":
        // No Content-Length: the limit is found while reading.
        return new Response(
          new ReadableStream({
            start(c) {
              for (let i = 0; i < 30; i++) c.enqueue(new Uint8Array(4096));
              c.close();
            },
          }),
          { headers: { "content-type": "application/octet-stream" } },
        );
      case "/slow":
        return new Response(new ReadableStream({ start: (c) => c.enqueue(new Uint8Array(10)) }), { headers: { "content-type": "application/octet-stream" } });
      case "/to-metadata":
        return new Response(null, { status: 302, headers: { location: "http://169.254.169.254/latest/meta-data/" } });
      case "/to-localhost":
        return new Response(null, { status: 302, headers: { location: `http://localhost:${url.port}/photo.png` } });
      default:
        return new Response("missing", { status: 404 });
    }
  },
});
const at = (path: string) => `http://127.0.0.1:${files.port}${path}`;

let server: TestServer;
let org: TestOrg;
let bucket: { id: string; name: string };
withServerAndOrg({
  server: { env: { IMPORT_ALLOW_PRIVATE: "true", IMPORT_MAX_BYTES: "50000", IMPORT_TIMEOUT_MS: "1500", IMPORT_MAX_REDIRECTS: "3" } },
  ready: async (made) => {
    ({ server, org } = made);
    picture = new Uint8Array(await png(40, 30));
    bucket = await newBucket(org, "imports");
  },
  cleanup: () => {
    files.stop(true);
    removeTempConfigHomes();
  },
});

type Import = { id: string; state: string; objectId: string | null; error: { code: string; message: string } | null; bytesReceived: number; totalBytes: number | null };

async function settled(api: TestOrg["admin"], id: string): Promise<Import> {
  return eventually(async () => {
    const res = await api.get(`/api/imports/${id}`);
    return res.body.state === "stored" || res.body.state === "failed" ? (res.body as Import) : undefined;
  }, { what: `import ${id} to settle` });
}

describe("import by URL over MCP", () => {
  test("wait: true with a progress token: progress notifications, then the stored object, processed like any upload", async () => {
    const client: Client = await mcpClient(server, org.adminKey.secret, "importer");
    const progress: { progress: number; total?: number }[] = [];
    const result = await client.request(
      { method: "tools/call", params: { name: "media_import", arguments: { bucketId: bucket.id, key: "from-web/photo.png", url: at("/photo.png"), tags: ["web"], wait: true } } },
      CallToolResultSchema,
      { onprogress: (p) => void progress.push(p) },
    );
    expect(result.isError).toBeFalsy();
    const done = result.structuredContent as Import;
    expect(done).toMatchObject({ state: "stored", bytesReceived: picture.length, totalBytes: picture.length, error: null });
    // Increasing, up to the file's size (the last one may be lost by the client: see the stdio test).
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((p, i) => p.progress <= picture.length && (i === 0 || p.progress > progress[i - 1]!.progress))).toBe(true);
    const object = await client.callTool({ name: "media_get", arguments: { id: done.objectId } });
    expect(object.structuredContent).toMatchObject({ key: "from-web/photo.png", size: picture.length, contentType: "image/png", kind: "image", tags: [expect.objectContaining({ name: "web" })] });
    // The thumbnail job runs as for an upload.
    await eventually(async () => ((await org.admin.get(`/api/media/${done.objectId}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "thumbnail" });
    await client.close();
  });

  test("without wait it answers queued at once; media_import_get follows it; redirects are followed", async () => {
    const client = await mcpClient(server, org.adminKey.secret, "importer");
    const started = await client.callTool({ name: "media_import", arguments: { bucketId: bucket.id, key: "from-web/redirected.png", url: at("/redirect/2") } });
    expect(started.structuredContent).toMatchObject({ state: "queued", bytesReceived: 0 });
    const id = (started.structuredContent as Import).id;
    const final = await eventually(async () => {
      const got = (await client.callTool({ name: "media_import_get", arguments: { id } })).structuredContent as Import;
      if (got.state === "failed") throw new Error(JSON.stringify(got.error));
      return got.state === "stored" ? got : undefined;
    });
    expect(final.objectId).toBeString();
    await client.close();
  });
});

describe("import by URL over REST (the same tool)", () => {
  test("POST /api/imports is 202 with the import", async () => {
    const res = await org.admin.post("/api/imports", { bucketId: bucket.id, key: "rest/photo.png", url: at("/photo.png") });
    expect(res.status).toBe(202);
    expect((await settled(org.admin, res.body.id)).state).toBe("stored");
  });

  const failsWith = async (path: string, extra: Record<string, unknown> = {}) => {
    const res = await org.admin.post("/api/imports", { bucketId: bucket.id, key: `fail/${crypto.randomUUID()}.bin`, url: at(path), ...extra });
    expect(res.status).toBe(202);
    return (await settled(org.admin, res.body.id)).error;
  };

  test("limits: redirects, size (declared, discovered and streamed), time, status, content type", async () => {
    // /redirect/2 takes 3 redirects (the limit here), /redirect/3 takes 4.
    expect(await failsWith("/redirect/3")).toMatchObject({ code: "redirects", message: "More than 3 redirects" });
    expect(await failsWith("/huge")).toMatchObject({ code: "too_large" });
    expect(await failsWith("/slow")).toMatchObject({ code: "timeout" });
    expect(await failsWith("/missing")).toMatchObject({ code: "status", message: "The URL answered HTTP 404" });
    expect(await failsWith("/page")).toMatchObject({ code: "validation_error", message: expect.stringContaining("text/html") });
    expect(await failsWith("/photo.png", { contentType: "video/mp4" })).toMatchObject({ code: "validation_error", message: expect.stringContaining("image/png") });
    // With 10,000 bytes allocated, 20,000 announced by Content-Length are refused before they are read.
    await server.services.deps.db.update(orgUsage).set({ allocatedStorage: 10_000 }).where(eq(orgUsage.orgId, org.orgId));
    expect(await failsWith("/big")).toMatchObject({ code: "quota_exceeded" });
    await server.services.deps.db.update(orgUsage).set({ allocatedStorage: 1024 ** 4 }).where(eq(orgUsage.orgId, org.orgId));
    const over = await org.admin.post("/api/imports", { bucketId: bucket.id, key: "declared.bin", url: at("/big"), size: 60_000 });
    expect(over.status).toBe(400);
    // Failed imports hold no quota.
    const usage = await org.admin.get("/api/usage");
    expect(usage.body.reservedStorage).toBe(0);
  });

  test("a declared size is reserved like a presign's", async () => {
    const small = await newOrg(server, "Declared");
    const b = await newBucket(small, "d");
    await server.services.deps.db.update(orgUsage).set({ allocatedStorage: 10_000 }).where(eq(orgUsage.orgId, small.orgId));
    const res = await small.admin.post("/api/imports", { bucketId: b.id, key: "too-big.bin", url: at("/photo.png"), size: 20_000 });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("quota_exceeded");
  });
});

describe("redirect hops are checked too", () => {
  test("a redirect to a metadata address, or to a name resolving to loopback, is refused", async () => {
    expect(await (async () => {
      const res = await org.admin.post("/api/imports", { bucketId: bucket.id, key: "hop/meta.bin", url: at("/to-metadata") });
      return (await settled(org.admin, res.body.id)).error;
    })()).toMatchObject({ code: "refused", message: expect.stringContaining("metadata") });
  });
});

describe("import over stdio (media mcp)", () => {
  test("the bridge relays the call, its progress notifications and the settled import", async () => {
    const client = new Client({ name: "desktop-agent", version: "1" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp"], env: cliEnv({ url: server.url, key: org.adminKey.secret }), stderr: "pipe" }));
    try {
      const progress: number[] = [];
      const result = await client.request(
        { method: "tools/call", params: { name: "media_import", arguments: { bucketId: bucket.id, key: "stdio/photo.png", url: at("/photo.png"), wait: true } } },
        CallToolResultSchema,
        { onprogress: (p) => void progress.push(p.progress) },
      );
      expect(result.structuredContent).toMatchObject({ state: "stored", bytesReceived: picture.length });
      // The SDK's client handles a notification a tick after it reads it, and forgets the token as
      // soon as it reads the result: a last notification read together with the result is lost.
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.every((p, i) => p <= picture.length && (i === 0 || p > progress[i - 1]!))).toBe(true);
    } finally {
      await client.close();
    }
  });
});
