import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../support/eventually.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * IPv4-compatible IPv6 addresses (::/96, such as [::7f00:1] for 127.0.0.1 or [::a9fe:a9fe] for
 * 169.254.169.254) lie outside every range the address library names, so they used to pass as
 * public unicast. They are refused wherever a user's URL is reached: a webhook endpoint when it
 * is created or changed, an import when it is asked for, and a redirect an import is sent to.
 * The server here has the development setting that allows loopback and private addresses (and
 * no host allowlist): these are refused even so, as cloud metadata is.
 */

const LITERALS = ["http://[::7f00:1]/x", "http://[::7f00:1]:8080/x", "http://[::a9fe:a9fe]/latest/meta-data/", "http://[::127.0.0.1]/x", "http://[::a00:1]/x"];

let server: TestServer;
let org: TestOrg;
let bucketId: string;
/** A loopback server (allowed here) that redirects every request to an IPv4-compatible address. */
let redirector: ReturnType<typeof Bun.serve>;
let redirected = 0;

beforeAll(async () => {
  server = await startServer({ env: { WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_ALLOWED_HOSTS: "", IMPORT_ALLOW_PRIVATE: "true" } });
  org = await newOrg(server, "Compat");
  bucketId = (await newBucket(org, "imports")).id;
  redirector = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => (redirected++, new Response(null, { status: 302, headers: { location: `http://[::7f00:1]:${redirector.port}/x.bin` } })),
  });
});
afterAll(async () => {
  redirector?.stop(true);
  await server?.stop();
});

const refusedUrl = (res: { status: number; body: any }, url: string) =>
  expect({ url, status: res.status, code: res.body.error?.code, path: res.body.error?.details?.[0]?.path, message: res.body.error?.details?.[0]?.message }).toEqual({
    url,
    status: 400,
    code: "validation_error",
    path: "url",
    message: expect.stringContaining("IPv4-compatible"),
  });

describe("IPv4-compatible addresses (::/96) are never reached", () => {
  test("a webhook endpoint on one is refused when created, and when an endpoint is changed to one", async () => {
    for (const url of LITERALS) refusedUrl(await org.admin.post("/api/webhooks", { url, eventTypes: ["bucket.created"] }), url);
    // A loopback endpoint is allowed by this server's development setting; changing it to ::/96 is not.
    const ok = await org.admin.post("/api/webhooks", { url: "http://127.0.0.1:9/hook", eventTypes: ["bucket.created"] });
    expect(ok.status).toBe(201);
    for (const url of LITERALS) refusedUrl(await org.admin.put(`/api/webhooks/${ok.body.id}`, { url }), url);
    expect((await org.admin.delete(`/api/webhooks/${ok.body.id}`)).status).toBeLessThan(300);
  });

  test("an import from one is refused before anything is fetched", async () => {
    for (const url of LITERALS) refusedUrl(await org.admin.post("/api/imports", { bucketId, key: "compat.bin", url, contentType: "application/octet-stream" }), url);
  });

  test("an import redirected to one fails as refused, without trying to connect there", async () => {
    const res = await org.admin.post("/api/imports", { bucketId, key: "redirected.bin", url: `http://127.0.0.1:${redirector.port}/start.bin`, contentType: "application/octet-stream" });
    expect(res.status).toBe(202);
    const done = await eventually(
      async () => {
        const got = (await org.admin.get(`/api/imports/${res.body.id}`)).body;
        return got.state === "failed" || got.state === "stored" ? got : undefined;
      },
      { what: "the redirected import to settle" },
    );
    expect(done.state).toBe("failed");
    expect(done.error.code).toBe("refused");
    expect(done.error.message).toContain("IPv4-compatible");
    expect(redirected).toBe(1);
  });
});
