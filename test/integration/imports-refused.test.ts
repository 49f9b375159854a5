import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../support/eventually.ts";
import { png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * media_import on a server configured as in production (no private addresses): every refused
 * address class, literal or behind a name. Its own file, so that no other server (one that may
 * reach loopback) shares its database and queue and runs its imports under another configuration.
 */
let picture: Uint8Array<ArrayBuffer>;

type Import = { state: string; error: { code: string; message: string } | null };
async function settled(api: TestOrg["admin"], id: string): Promise<Import> {
  return eventually(async () => {
    const res = await api.get(`/api/imports/${id}`);
    return res.body.state === "stored" || res.body.state === "failed" ? (res.body as Import) : undefined;
  }, { what: `import ${id} to settle` });
}

describe("on a server configured as in production", () => {
  let strict: TestServer;
  let admin: TestOrg["admin"];
  let target: string;
  beforeAll(async () => {
    picture = new Uint8Array(await png(8, 8));
    strict = await startServer({ env: { IMPORT_ALLOW_PRIVATE: "" } });
    const o = await newOrg(strict, "Strict");
    admin = o.admin;
    target = (await newBucket(o, "s")).id;
  }, 120_000);
  afterAll(() => strict?.stop());

  test("address literals of every refused class are a 400 before anything is fetched", async () => {
    for (const url of [
      "http://127.0.0.1:8080/a.png", // loopback
      "http://[::1]/a.png", // loopback, IPv6
      "http://10.1.2.3/a.png", // private
      "http://172.16.0.1/a.png", // private
      "http://192.168.1.1/a.png", // private
      "http://169.254.10.10/a.png", // link-local
      "http://[fe80::1]/a.png", // link-local, IPv6
      "http://[fd12:3456::1]/a.png", // unique-local
      "http://169.254.169.254/latest/meta-data/", // cloud metadata
      "http://[fd00:ec2::254]/latest/", // cloud metadata, IPv6
      "http://[::ffff:10.0.0.1]/a.png", // private, IPv4-mapped
      "http://0.0.0.0/a.png", // unspecified
      "file:///etc/passwd",
      "ftp://example.com/a.png",
      "https://user:secret@example.com/a.png",
    ]) {
      const res = await admin.post("/api/imports", { bucketId: target, key: "x.png", url });
      expect({ url, status: res.status, code: res.body.error?.code, path: res.body.error?.details?.[0]?.path }).toEqual({ url, status: 400, code: "validation_error", path: "url" });
    }
  });

  test("a name that resolves to a loopback address is refused when the worker connects, and the file server gets nothing", async () => {
    let hits = 0;
    const watched = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (hits++, new Response(picture)) });
    try {
      const res = await admin.post("/api/imports", { bucketId: target, key: "y.png", url: `http://localhost:${watched.port}/y.png` });
      expect(res.status).toBe(202);
      const done = await settled(admin, res.body.id);
      // Refused without telling which internal address the name has.
      expect(done.error?.code).toBe("refused");
      expect(done.error?.message).toContain("resolves to an address this service may not reach");
      expect(done.error?.message).not.toMatch(/127\.0\.0\.1|::1|loopback/);
      expect(hits).toBe(0);
    } finally {
      watched.stop(true);
    }
  });
});

