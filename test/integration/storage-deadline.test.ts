import { afterAll, beforeAll, expect, test } from "bun:test";
import { S3Storage } from "../../storage/s3.ts";
import { newOrg, startServer } from "../support/server.ts";
import { otherStore, type OtherStore } from "../support/other-store.ts";

// One pass: the storage client's deadline does not depend on the database or Redis.

/**
 * S3_TIMEOUT_MS bounds a storage operation in all, its retries included. A store that accepts
 * connections and never answers gets one request per operation, which fails at the deadline
 * (three attempts of the full timeout each made a confirm wait 39 s); a store that fails
 * quickly (a 503) is still tried again within the deadline.
 */

/**
 * A TCP proxy that counts the HTTP requests it receives and, once told to hang, answers none,
 * as a store behind a dead load balancer would.
 */
function countingProxy(targetPort: number | null) {
  let hang = targetPort === null;
  /** The request line of every request the proxy held: a failure shows what was sent. */
  const hungLines: string[] = [];
  type Conn = { up: import("bun").Socket<unknown> | null; pending: Uint8Array[]; hung: boolean };
  const server = Bun.listen<Conn>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        client.data = { up: null, pending: [], hung: hang };
        if (client.data.hung) return;
        void Bun.connect({
          hostname: "127.0.0.1",
          port: targetPort!,
          socket: {
            open(up) {
              client.data.up = up;
              for (const c of client.data.pending.splice(0)) up.write(c);
            },
            data(_up, chunk) {
              client.write(chunk);
            },
            close() {
              client.end();
            },
            error() {
              client.end();
            },
          },
        }).catch(() => client.end());
      },
      data(client, chunk) {
        if (hang) client.data.hung = true;
        if (client.data.hung) {
          const line = new TextDecoder().decode(chunk.subarray(0, 200)).split("\r\n")[0]!;
          if (/^(GET|HEAD|PUT|POST|DELETE) /.test(line)) hungLines.push(line);
          return;
        }
        if (client.data.up) client.data.up.write(chunk);
        else client.data.pending.push(new Uint8Array(chunk));
      },
      close(client) {
        client.data.up?.end();
      },
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    hang: () => {
      hang = true;
    },
    hungRequests: () => hungLines.length,
    /**
     * The held requests for the object at `path` (bucket id / key). Run on PostgreSQL
     * (TEST_MODES=services runs this one-pass file there too), the server's worker also takes
     * jobs other files left in the shared outbox and queue, and asks this store for their
     * objects: those are not the operation's requests.
     */
    hungFor: (path: string) => hungLines.filter((l) => l.split(" ")[1]?.split("?")[0]?.endsWith(`/${path}`)),
    stop: () => server.stop(true),
  };
}

const credentials = { accessKeyId: "DEADLINE", secretAccessKey: "deadline-secret" };

test("each operation on a store that never answers sends one request and fails at S3_TIMEOUT_MS as a timeout", async () => {
  const hung = countingProxy(null);
  const storage = new S3Storage({ endpoint: hung.url, publicEndpoint: null, region: "us-east-1", bucket: "b", forcePathStyle: true, timeoutMs: 1000, ...credentials });
  try {
    const operations: [string, () => Promise<unknown>][] = [
      ["head", () => storage.head("k")],
      ["get", () => storage.get("k")],
      ["put", () => storage.put("k", new Uint8Array(10), { contentType: "text/plain" })],
      ["list", () => storage.listPage("")],
      ["putTags", () => storage.putTags("k", "a=b")],
      ["delete", () => storage.delete("k")],
      ["createMultipart", () => storage.createMultipart("k", { contentType: "text/plain" })],
    ];
    for (const [name, run] of operations) {
      const before = hung.hungRequests();
      const err = await run().then(
        () => null,
        (e) => e,
      );
      expect([name, (err as Error | null)?.name]).toEqual([name, "TimeoutError"]);
      expect([name, hung.hungRequests() - before]).toEqual([name, 1]);
    }
  } finally {
    storage.client.destroy();
    hung.stop();
  }
}, 60_000);

test("a store that answers 503 twice is tried again within the deadline and the third answer counts", async () => {
  let requests = 0;
  const flaky = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => (++requests <= 2 ? new Response("", { status: 503 }) : new Response(null, { status: 200, headers: { "content-length": "5", etag: '"e"', "content-type": "text/plain" } })),
  });
  const storage = new S3Storage({ endpoint: `http://127.0.0.1:${flaky.port}`, publicEndpoint: null, region: "us-east-1", bucket: "b", forcePathStyle: true, timeoutMs: 10_000, ...credentials });
  try {
    expect(await storage.head("k")).toMatchObject({ size: 5 });
    expect(requests).toBe(3);
  } finally {
    storage.client.destroy();
    flaky.stop(true);
  }
});

let store: OtherStore;
beforeAll(async () => {
  store = await otherStore();
});
afterAll(async () => {
  await store?.stop();
});

test("a confirm against a store that stops answering sends it one request and answers 503 unavailable", async () => {
  const proxy = countingProxy(store.port);
  const server = await startServer({ env: { ...store.env(proxy.url), S3_TIMEOUT_MS: "1500" } });
  try {
    const org = await newOrg(server);
    const bucket = (await org.admin.post("/api/buckets", { name: "deadline" })).body;
    const presigned = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "a.bin" });
    expect((await fetch(presigned.body.url, { method: "PUT", headers: presigned.body.headers, body: new Uint8Array(70) })).status).toBe(200);
    proxy.hang();
    const confirm = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "a.bin" });
    expect([confirm.status, confirm.body.error?.code]).toEqual([503, "unavailable"]);
    expect(proxy.hungFor(`${bucket.id}/a.bin`)).toHaveLength(1);
  } finally {
    await server.stop();
    proxy.stop();
  }
}, 60_000);
