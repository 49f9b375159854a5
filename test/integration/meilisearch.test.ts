import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { eventually } from "../support/eventually.ts";
import { upload } from "../support/upload.ts";

/**
 * The Meilisearch backend against a real server. No Meilisearch can be installed on the
 * project's machines, so this runs only where MEILISEARCH_URL is set, and is reported as
 * skipped elsewhere (never faked). The translation itself is unit-tested.
 */
const url = process.env.MEILISEARCH_URL;

describe.skipIf(!url)("Meilisearch backend (MEILISEARCH_URL)", () => {
  let server: TestServer;
  let org: TestOrg;
  let bucket: string;

  // Documents reach Meilisearch through sync jobs: wait until a search shows the expected total.
  const searchUntil = (qs: string, total: number) =>
    eventually(async () => {
      const res = await org.admin.get(`/api/search?${qs}`);
      return res.body.total === total ? res : undefined;
    }, { what: `search ${qs} to find ${total}` });

  beforeAll(async () => {
    server = await startServer({ embedded: true, env: { MEILISEARCH_URL: url!, ...(process.env.MEILISEARCH_KEY ? { MEILISEARCH_KEY: process.env.MEILISEARCH_KEY } : {}), REDIS_PREFIX: `mtest${Date.now()}` } });
    org = await newOrg(server);
    bucket = (await org.admin.post("/api/buckets", { name: "m" })).body.id;
    await upload(org.admin, bucket, "beach/sunset.jpg", "a", { contentType: "image/jpeg", tags: ["sunset"] });
    await upload(org.admin, bucket, "city/night.jpg", "b", { contentType: "image/jpeg", tags: ["night"] });
    await upload(org.admin, bucket, "docs/sunset-report.pdf", "c", { contentType: "application/pdf" });
  });
  afterAll(() => server?.stop());

  test("/readyz asks Meilisearch too", async () => {
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect((await res.json()).checks.meilisearch.ok).toBe(true);
  });

  test("finds, filters and counts facets through Meilisearch", async () => {
    const res = await searchUntil("q=sunset", 2);
    expect(res.body.facets.kinds).toEqual(expect.arrayContaining([{ kind: "image", count: 1 }, { kind: "pdf", count: 1 }]));
    expect(res.body.facets.tags).toEqual([{ slug: "sunset", name: "sunset", count: 1 }]);
    expect((await org.admin.get("/api/search?q=sunset&kind=pdf")).body.media.map((m: { key: string }) => m.key)).toEqual(["docs/sunset-report.pdf"]);
    expect((await org.admin.get("/api/search?q=sunset&tags=sunset")).body.total).toBe(1);
  });

  test("changes reach the index through the outbox; other organizations see nothing", async () => {
    const target = (await org.admin.get("/api/search?q=night")).body.media[0];
    await org.admin.put(`/api/media/${target.id}/metadata`, { metadata: { animal: "owl" } });
    await searchUntil("q=owl", 1);
    await org.admin.delete(`/api/media/${target.id}`);
    await searchUntil("q=owl", 0);
    const other = await newOrg(server);
    expect((await other.admin.get("/api/search?q=sunset")).body.total).toBe(0);
  });
});
