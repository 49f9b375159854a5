/** Cases the fuzzer found, pinned so they stay fixed whatever the fuzzer's seed. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signatureFor, TEST_PLANS, WEBHOOK_SECRET } from "../support/billing.ts";
import { insertObject, newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { toolError } from "../support/mcp-results.ts";

let server: TestServer;
let org: TestOrg;

beforeAll(async () => {
  server = await startServer({ env: { PLANS: JSON.stringify(TEST_PLANS), STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, MAX_BODY_BYTES: "4096" } });
  org = await newOrg(server);
});
afterAll(() => server.stop());

async function mcp(body: string) {
  const res = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${org.adminKey.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) };
}

describe("NUL characters are a 400 naming the field, not a failed query", () => {
  test("in a body field, a query parameter, a metadata key and a metadata value", async () => {
    const bucket = await newBucket(org);
    const object = await insertObject(server, org, bucket.id);
    const cases = [
      [await org.admin.put(`/api/media/${object.id}/metadata`, { metadata: { "k\u0000": 1 } }), "metadata.k\u0000"],
      [await org.admin.put(`/api/media/${object.id}/metadata`, { metadata: { k: "v\u0000" } }), "metadata.k"],
      [await org.admin.post("/api/api-keys", { name: "a\u0000b" }), "name"],
      [await org.admin.get("/api/search?q=a%00b"), "q"],
      [await org.admin.get("/api/tags?search=%00"), "search"],
      [await org.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key: "k", uploadId: "\u0000", partNumber: 1 }), "uploadId"],
    ] as const;
    for (const [res, path] of cases) {
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "validation_error", details: [{ path, message: expect.stringContaining("NUL") }] });
    }
  });

  test("over MCP too, as a tool error", async () => {
    const res = await mcp(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "tags_create", arguments: { name: "x\u0000" } } }));
    expect(res.body.result.isError).toBe(true);
    expect(toolError(res.body.result.content).code).toBe("validation_error");
  });
});

describe("/mcp", () => {
  test("tools/call with arguments that are not an object is invalid params (-32602), not an internal error", async () => {
    for (const args of [[], null, "x", 1]) {
      const res = await mcp(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "buckets_list", arguments: args } }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: 7, error: { code: -32602 } });
    }
  });

  test("a body over MAX_BODY_BYTES is 413 with the envelope, as on REST", async () => {
    const res = await mcp(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(5000) } }));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
  });

  test("requests under the limit still work after the body is read for the check", async () => {
    const res = await mcp(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "me_get", arguments: {} } }));
    expect(res.body.result.isError).toBeFalsy();
  });
});

describe("payment webhook", () => {
  test("a correctly signed body that is not an event is 400, not 500", async () => {
    for (const body of ["null", "[]", '"x"', "{}", '{"type":"invoice.paid"}', '{"id":"evt_1"}', '{"id":42,"type":"invoice.paid"}']) {
      const res = await fetch(`${server.url}/api/payments/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": await signatureFor(body) },
        body,
      });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect((await res.json()).error).toMatchObject({ code: "bad_request", details: { reason: "body" } });
    }
  });
});

describe("content types travel as headers to storage", () => {
  test("control or non-ASCII characters in the parameters are a 400, not a failed storage call", async () => {
    const bucket = await newBucket(org);
    for (const contentType of ["a/b; x\n", "a/b;\u000b", "text/plain;\r\nx-evil: 1", "text/plain; name=é"]) {
      for (const path of ["/api/presign/upload", "/api/presign/create-multipart"]) {
        const res = await org.admin.post(path, { bucketId: bucket.id, key: "k.txt", contentType });
        expect({ contentType, path, status: res.status, code: res.body.error?.code }).toEqual({ contentType, path, status: 400, code: "validation_error" });
      }
    }
    const ok = await org.admin.post("/api/presign/create-multipart", { bucketId: bucket.id, key: "k.txt", contentType: "text/plain; charset=utf-8" });
    expect(ok.status).toBe(200);
  });
});

describe("a tag given twice", () => {
  test("is one tag in storage: a multipart upload starts, and a single PUT with the signed headers is stored (S3 refuses a tag key twice)", async () => {
    const bucket = await newBucket(org);
    const multipart = await org.admin.post("/api/presign/create-multipart", { bucketId: bucket.id, key: "twice.bin", tags: ["-", "-", "sunset"] });
    expect(multipart.status).toBe(200);
    const presigned = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "twice.txt", contentType: "text/plain", tags: ["sunset", "sunset"] });
    expect(presigned.status).toBe(200);
    const put = await fetch(presigned.body.url, { method: "PUT", headers: presigned.body.headers, body: "hello" });
    expect(put.status).toBe(200);
    const confirmed = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "twice.txt" });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.tags.map((t: { slug: string }) => t.slug)).toEqual(["sunset"]);
  });
});

describe("validation answers stay small whatever the input", () => {
  test("thousands of bad entries or unknown keys give a bounded list of details", async () => {
    const bucket = await newBucket(org);
    const object = await insertObject(server, org, bucket.id);
    const many = await org.admin.put(`/api/media/${object.id}/metadata`, { metadata: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, [i]])) });
    expect(many.status).toBe(400);
    expect(many.body.error.details).toHaveLength(51);
    expect(many.body.error.details[50]).toEqual({ path: "", message: "250 more issues not listed" });
    const unknown = await org.admin.post("/api/buckets", { name: "ok", ...Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`u${i}`, 1])), ["x".repeat(1000)]: 1 });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual([{ path: "", message: expect.stringMatching(/^Unrecognized keys: "u0", .* and 191 more$/) }]);
    expect(JSON.stringify(unknown.body).length).toBeLessThan(1000);
  });
});
