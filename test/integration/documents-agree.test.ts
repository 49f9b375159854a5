import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { multipartUploads } from "../../db/schema/index.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI, cliEnv, removeTempConfigHomes } from "../support/cli.ts";
import { eventually } from "../support/eventually.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import { pdf, png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import { rawRequest } from "../support/raw-http.ts";
import { newOrg, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * Places where the service and its documents used to disagree, each held to what the document
 * now says: SECURITY.md (the storage node's headers, the repeated complete-upload) and
 * docs/conventions.md (405 with the envelope and `Allow`, whatever the method).
 */
let server: TestServer;
let org: TestOrg;
let bucket: { id: string; name: string };

/** Objects whose thumbnails are made in the background: the server stops once they are settled. */
const made: string[] = [];
const put = async (...args: Parameters<typeof upload>) => {
  const o = await upload(...args);
  made.push(o.id);
  return o;
};

withServerAndOrg({
  ready: async (started) => {
    ({ server, org } = started);
    bucket = await newBucket(org, "docs");
  },
  cleanup: async () => {
    removeTempConfigHomes();
    for (const id of made) {
      await eventually(async () => ((await org.admin.get(`/api/media/${id}`)).body.thumbnail?.state === "pending" ? undefined : true), { what: `the thumbnail of ${id}`, timeoutMs: 120_000 });
    }
  },
});

describe("SECURITY.md, finding 6: what the embedded storage node serves inline carries a CSP", () => {
  const POLICY = "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'";

  test("a PDF: the policy without sandbox (its viewer would not run), with object-src 'self'; inline when streamed", async () => {
    const doc = await put(org.admin, bucket.id, "papers/a.pdf", pdf(1), { contentType: "application/pdf" });
    const stream = await org.admin.get(`/api/media/${doc.id}/stream`);
    expect(stream.status).toBe(302);
    const download = await org.admin.post("/api/presign/download", { objectId: doc.id });
    for (const [url, inline] of [
      [stream.headers.get("location")!, true],
      [download.body.url, false],
    ] as const) {
      const res = await fetch(url);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/pdf");
      expect(res.headers.get("content-security-policy")).toBe(`${POLICY}; object-src 'self'`);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      if (inline) expect(res.headers.get("content-disposition")).toBeNull();
      else expect(res.headers.get("content-disposition")).toStartWith("attachment");
    }
  });

  test("an image and a text file: the policy with sandbox", async () => {
    for (const [key, bytes, type] of [
      ["pics/a.png", await png(4, 4), "image/png"],
      ["notes/a.txt", "plain words", "text/plain"],
    ] as const) {
      const o = await put(org.admin, bucket.id, key, bytes, { contentType: type });
      const res = await fetch((await org.admin.get(`/api/media/${o.id}/stream`)).headers.get("location")!);
      await res.arrayBuffer();
      expect(res.headers.get("content-security-policy")).toBe(`${POLICY}; sandbox`);
    }
  });
});

describe("docs/conventions.md: a path that exists answers another method with 405, the envelope and Allow", () => {
  // Written by hand on the wire: Bun's fetch drops the body of an answer to TRACE (which made a
  // 405 look empty), and Node's will not send TRACE or CONNECT at all.
  const METHODS = ["TRACE", "CONNECT", "PATCH", "PROPFIND", "OPTIONS"];
  const paths = (): [string, string][] => [
    ["/api/buckets", "GET, HEAD, POST"],
    [`/api/buckets/${bucket.id}`, "DELETE, GET, HEAD"],
    ["/api/openapi.json", "GET, HEAD"],
    ["/api/render/00000000-0000-0000-0000-000000000000", "GET, HEAD"],
    ["/", "GET, HEAD"],
    ["/healthz", "GET, HEAD"],
    ["/console", "GET, HEAD"],
    ["/console/assets/app.js", "GET, HEAD"],
    ["/.well-known/oauth-protected-resource", "GET, HEAD"],
    ["/register", "POST"],
  ];

  test("every method the runtime passes on, on the API's paths and the others", async () => {
    for (const [path, allow] of paths()) {
      for (const method of METHODS) {
        const res = await rawRequest(server.url, method, path, { authorization: `Bearer ${org.adminKey.secret}` });
        const body = JSON.parse(res?.body || "null");
        expect({ method, path, status: res?.status, allow: res?.headers.get("allow"), code: body?.error?.code }).toEqual({ method, path, status: 405, allow, code: "method_not_allowed" });
        expect(body.error.requestId).toBe(res!.headers.get("x-request-id"));
        expect(body.error.message).toBe(`${path} takes ${allow}, not ${method}`);
        expect(res!.headers.get("content-type")).toStartWith("application/json");
        expect(res!.headers.get("x-content-type-options")).toBe("nosniff");
      }
    }
  });

  test("a method the runtime does not know is dropped before the service sees it: no answer at all", async () => {
    // Bun's own limit (its parser knows a fixed list of methods); the document says so, and this
    // fails the day Bun answers instead, so that the document is changed with it.
    expect(await rawRequest(server.url, "FOO", "/api/buckets")).toBeNull();
  });

  test("a path no route has stays 404 with the envelope, whatever the method", async () => {
    for (const method of ["GET", "TRACE"]) {
      for (const path of ["/elsewhere", "/api/buckets/a/b/c"]) {
        const res = await rawRequest(server.url, method, path);
        expect({ method, path, status: res?.status, code: JSON.parse(res!.body).error.code, allow: res!.headers.get("allow") }).toEqual({ method, path, status: 404, code: "not_found", allow: null });
      }
    }
  });
});

describe("a signed render URL is absolute on every surface (PUBLIC_URL unset: the address the request reached)", () => {
  test("REST, MCP over HTTP and MCP over stdio answer the same absolute URL, and it serves the render", async () => {
    expect(server.config.publicUrl).toBeNull();
    const picture = await put(org.admin, bucket.id, "render/me.png", await png(16, 12), { contentType: "image/png" });
    const args = { id: picture.id, width: 8, expiresIn: 600 };
    const rest = (await org.admin.get(`/api/media/${picture.id}/render-url?width=8&expiresIn=600`)).body.url as string;

    const http = await mcpClient(server, org.adminKey.secret, "render-url");
    const overHttp = ((await http.callTool({ name: "media_render_url", arguments: args })).structuredContent as { url: string }).url;
    await http.close();

    const stdio = new Client({ name: "desktop-agent", version: "1" });
    await stdio.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp"], env: cliEnv({ url: server.url, key: org.adminKey.secret }), stderr: "pipe" }));
    const overStdio = ((await stdio.callTool({ name: "media_render_url", arguments: args })).structuredContent as { url: string }).url;
    await stdio.close();

    for (const url of [rest, overHttp, overStdio]) {
      expect(url).toStartWith(`${server.url}/api/render/${picture.id}?`);
      // Signed at the same second or the next: the same parameters either way.
      expect(new URL(url).searchParams.get("width")).toBe("8");
    }
    await eventually(async () => ((await org.admin.get(`/api/media/${picture.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "the thumbnail renders are cut from", timeoutMs: 120_000 });
    const res = await fetch(overHttp);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("image/");
    await res.arrayBuffer();
  }, 180_000);
});

describe("SECURITY.md, finding 4: complete-upload of an upload that is no longer open is 409 conflict", () => {
  async function openUpload(key: string) {
    const m = await org.admin.post("/api/presign/create-multipart", { bucketId: bucket.id, key, size: 10 });
    expect(m.status).toBe(200);
    const part = await org.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key, uploadId: m.body.uploadId, partNumber: 1 });
    expect((await fetch(part.body.url, { method: "PUT", headers: part.body.headers, body: "0123456789" })).status).toBe(200);
    return { bucketId: bucket.id, key, uploadId: m.body.uploadId as string };
  }
  const expectConflict = (res: { status: number; body: any }, says: RegExp) => {
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 409, code: "conflict" });
    expect(res.body.error.message).toMatch(says);
  };

  test("repeated after completing, before and after the confirm", async () => {
    const upload = await openUpload("multi/done.bin");
    expect((await org.admin.post("/api/presign/complete-upload", upload)).status).toBe(200);
    expectConflict(await org.admin.post("/api/presign/complete-upload", upload), /completed/);
    const confirmed = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: upload.key });
    expect(confirmed.status).toBe(200);
    made.push(confirmed.body.id);
    expectConflict(await org.admin.post("/api/presign/complete-upload", upload), /completed/);
    // The other calls on that upload id say the same.
    expectConflict(await org.admin.post("/api/presign/upload-part", { ...upload, partNumber: 2 }), /completed/);
  });

  test("after an abort", async () => {
    const upload = await openUpload("multi/aborted.bin");
    expect((await org.admin.post("/api/presign/abort-multipart", upload)).status).toBe(200);
    expectConflict(await org.admin.post("/api/presign/complete-upload", upload), /aborted/);
  });

  test("an id is remembered 30 days: one given out longer ago is forgotten (404) once the organization starts another upload", async () => {
    const old = await openUpload("multi/old.bin");
    expect((await org.admin.post("/api/presign/abort-multipart", old)).status).toBe(200);
    const { db } = server.services.deps;
    const aged = (days: number) => db.update(multipartUploads).set({ createdAt: new Date(Date.now() - days * 86_400_000) }).where(eq(multipartUploads.uploadId, old.uploadId));
    await aged(29);
    await org.admin.post("/api/presign/abort-multipart", await openUpload("multi/newer.bin"));
    expect((await org.admin.post("/api/presign/complete-upload", old)).status).toBe(409);
    await aged(31);
    await org.admin.post("/api/presign/abort-multipart", await openUpload("multi/newest.bin"));
    const forgotten = await org.admin.post("/api/presign/complete-upload", old);
    expect({ status: forgotten.status, code: forgotten.body.error?.code }).toEqual({ status: 404, code: "not_found" });
  });

  test("an upload id this service never gave out stays 404, as does another organization's", async () => {
    const upload = await openUpload("multi/theirs.bin");
    const missing = await org.admin.post("/api/presign/complete-upload", { ...upload, uploadId: "never-issued" });
    expect({ status: missing.status, code: missing.body.error?.code }).toEqual({ status: 404, code: "not_found" });
    const wrongKey = await org.admin.post("/api/presign/complete-upload", { ...upload, key: "multi/other.bin" });
    expect(wrongKey.status).toBe(404);
    expect((await org.admin.post("/api/presign/abort-multipart", upload)).status).toBe(200);
    // Closed, this id is known here (409), and still nothing in another organization's bucket.
    const stranger = await newOrg(server);
    const theirs = await newBucket(stranger);
    const elsewhere = await stranger.admin.post("/api/presign/complete-upload", { ...upload, bucketId: theirs.id });
    expect({ status: elsewhere.status, code: elsewhere.body.error?.code }).toEqual({ status: 404, code: "not_found" });
    expect((await org.admin.post("/api/presign/complete-upload", upload)).status).toBe(409);
  });
});
