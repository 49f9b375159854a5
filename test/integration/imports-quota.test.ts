import { expect, setDefaultTimeout, test } from "bun:test";
import type { Clock } from "../../domain/core/clock.ts";
import { eventually } from "../support/eventually.ts";
import { withServerAndOrg } from "../support/fixtures.ts";
import { newBucket } from "../support/objects.ts";
import type { TestOrg } from "../support/server.ts";

/**
 * An import's quota hold is found again by its bucket, key and creation instant. On a loaded
 * machine two readings of the clock in one request differ; this server's clock moves a
 * millisecond at every reading, so a hold recorded under one instant and looked up under
 * another would leak: the organization's reservedStorage would stay up after the import
 * ended, until the organization could not upload at all.
 */
setDefaultTimeout(120_000);

const body = new Uint8Array(3000).fill(7);
const files = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    switch (new URL(request.url).pathname) {
      case "/file.bin":
        return new Response(body, { headers: { "content-type": "application/octet-stream" } });
      case "/stalls":
        // Announces 5,000 bytes, sends 10 and stops: the hold is taken, then the import times out.
        return new Response(new ReadableStream({ start: (c) => c.enqueue(new Uint8Array(10)) }), {
          headers: { "content-type": "application/octet-stream", "content-length": "5000" },
        });
      default:
        return new Response("missing", { status: 404 });
    }
  },
});
const at = (path: string) => `http://127.0.0.1:${files.port}${path}`;

let start = Date.now();
const ticking: Clock = { now: () => new Date(start++) };

let org: TestOrg;
let bucket: { id: string };
withServerAndOrg({
  server: { clock: ticking, env: { IMPORT_ALLOW_PRIVATE: "true", IMPORT_TIMEOUT_MS: "1000" } },
  ready: async (made) => {
    org = made.org;
    bucket = await newBucket(org, "imports");
  },
  cleanup: () => void files.stop(true),
});

async function settle(key: string, url: string) {
  const res = await org.admin.post("/api/imports", { bucketId: bucket.id, key, url });
  expect(res.status).toBe(202);
  return eventually(async () => {
    const got = await org.admin.get(`/api/imports/${res.body.id}`);
    return got.body.state === "stored" || got.body.state === "failed" ? got.body : undefined;
  }, { what: `import of ${key}` });
}

test("a size learnt from Content-Length is held, then given back when the import is stored", async () => {
  expect(await settle("stored.bin", at("/file.bin"))).toMatchObject({ state: "stored", bytesReceived: body.length });
  expect((await org.admin.get("/api/usage")).body).toMatchObject({ usedStorage: body.length, reservedStorage: 0 });
});

test("... and when it fails after the hold was taken", async () => {
  expect(await settle("stalled.bin", at("/stalls"))).toMatchObject({ state: "failed", error: { code: "timeout" } });
  expect((await org.admin.get("/api/usage")).body).toMatchObject({ usedStorage: body.length, reservedStorage: 0 });
});
