import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { GENERATION_PIXELS_PER_MINUTE, MAX_GENERATIONS_PER_HOUR } from "../../domain/collections/sets.ts";
import type { Processors } from "../../domain/ports/queue.ts";
import type { JobPayloads } from "../../domain/core/jobs.ts";
import { processorsFor } from "../../worker/processors.ts";
import { eventually, WAIT_CEILING_MS } from "../support/eventually.ts";
import { png } from "../support/media-files.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * The CPU bounds of set renditions (attack run, finding 3): pixels per item and per set refused
 * at input, generations per organization and hour, megapixels asked for per minute, and a rendition that fails deterministically
 * runs once instead of WORKER_ATTEMPTS times. The real processors run; the test only counts the
 * runs of `sets.generate`.
 */
let server: TestServer;
let org: TestOrg;
let bucket: string;
/**
 * Runs of `sets.generate` per set. In the services mode every test file of a run shares one
 * database and one Redis queue, so this file's worker may also run jobs another file left
 * behind; only the runs of a set made here count.
 */
const generateRuns = new Map<string, number>();

beforeAll(async () => {
  server = await startServer({
    env: { WORKER_ATTEMPTS: "3", WORKER_BACKOFF_MS: "50" },
    processors: (deps) => {
      const real = processorsFor(deps);
      const counted: Processors = { ...real };
      counted["sets.generate"] = {
        run: (job, run) => {
          const { setId } = job.data as JobPayloads["sets.generate"];
          generateRuns.set(setId, (generateRuns.get(setId) ?? 0) + 1);
          return real["sets.generate"]!.run(job, run);
        },
      };
      return counted;
    },
  });
  org = await newOrg(server);
  bucket = (await org.admin.post("/api/buckets", { name: "limits" })).body.id;
});
afterAll(() => server.stop());

async function newSet(baseObjectId: string) {
  const res = await org.admin.post("/api/sets", { name: "bounded", baseObjectId });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

type Item = { aspectRatio: string; width: number; height: number; role: string };

/** A new organization with a set cut from a small picture, holding `items`. */
async function orgWithSet(name: string, items: Item[]): Promise<{ org: TestOrg; setId: string }> {
  const owner = await newOrg(server, name);
  const ownBucket = (await owner.admin.post("/api/buckets", { name: "sets" })).body.id;
  const base = await upload(owner.admin, ownBucket, "base.png", await png(32, 32), { contentType: "image/png" });
  const setId = (await owner.admin.post("/api/sets", { name, baseObjectId: base.id })).body.id as string;
  for (const item of items) expect((await owner.admin.post(`/api/sets/${setId}/items`, item)).status).toBe(201);
  return { org: owner, setId };
}

const ONE_MEGAPIXEL: Item = { aspectRatio: "1:1", width: 1000, height: 1000, role: "square" };

/** A generation `secondsAgo`, recorded as the outbox records it (already handed over), asking for `pixels`. */
async function earlier(orgId: string, pixels: number, secondsAgo: number) {
  await server.services.deps.db.execute(sql`
    insert into job_outbox (name, payload, created_at, dispatched_at, done_at)
    values ('sets.generate', ${JSON.stringify({ orgId, setId: crypto.randomUUID(), pixels })}::jsonb, now() - ${secondsAgo}::int * interval '1 second', now(), now())`);
}

describe("set rendition limits", () => {
  test("a generated item over 40 megapixels is 400; an attached one only describes its object", async () => {
    const base = await upload(org.admin, bucket, "base-a.png", await png(64, 64), { contentType: "image/png" });
    const setId = await newSet(base.id);
    const big = await org.admin.post(`/api/sets/${setId}/items`, { aspectRatio: "1:1", width: 12000, height: 12000, role: "huge" });
    expect(big.status).toBe(400);
    expect(big.body.error.details[0]).toEqual({ path: "width", message: "12000x12000 is 144.0 megapixels; a generated rendition is at most 40" });
    expect((await org.admin.post(`/api/sets/${setId}/items`, { aspectRatio: "8:5", width: 8000, height: 5000, role: "largest" })).status).toBe(201);
    const attached = await org.admin.post(`/api/sets/${setId}/items`, { objectId: base.id, aspectRatio: "1:1", width: 12000, height: 12000, role: "described" });
    expect(attached.status).toBe(201);
  });

  test("the generated items of one set total at most 400 megapixels (409)", async () => {
    const base = await upload(org.admin, bucket, "base-b.png", await png(64, 64), { contentType: "image/png" });
    const setId = await newSet(base.id);
    for (let i = 0; i < 10; i++) expect((await org.admin.post(`/api/sets/${setId}/items`, { aspectRatio: "8:5", width: 8000, height: 5000, role: `r${i}` })).status).toBe(201);
    const over = await org.admin.post(`/api/sets/${setId}/items`, { aspectRatio: "1:1", width: 10, height: 10, role: "one-more" });
    expect(over.status).toBe(409);
    expect(over.body.error.details).toEqual({ limit: 400_000_000, used: 400_000_000 });
  });

  test("a rendition that fails deterministically runs once, not WORKER_ATTEMPTS times", async () => {
    // Bytes that claim to be a PNG and are not: decoding fails the same way every time.
    const base = await upload(org.admin, bucket, "broken.png", new Uint8Array(4096).fill(7), { contentType: "image/png" });
    const setId = await newSet(base.id);
    expect((await org.admin.post(`/api/sets/${setId}/items`, { aspectRatio: "1:1", width: 100, height: 100, role: "square" })).status).toBe(201);
    expect((await org.admin.post(`/api/sets/${setId}/generate`)).status).toBe(202);
    await eventually(async () => (generateRuns.has(setId) ? true : undefined), { timeoutMs: WAIT_CEILING_MS, what: "the generate job to run" });
    // Retries would come 50 ms and 100 ms later; give them ten times that.
    await Bun.sleep(1500);
    expect(generateRuns.get(setId)).toBe(1);
    const set = (await org.admin.get(`/api/sets/${setId}`)).body;
    expect(set.items[0].objectId).toBeNull();
  });

  test(`at most ${MAX_GENERATIONS_PER_HOUR} generations per organization an hour; then 429 with Retry-After`, async () => {
    const { org: other, setId: otherSet } = await orgWithSet("Other", []);

    const base = await upload(org.admin, bucket, "base-c.png", await png(32, 32), { contentType: "image/png" });
    const setId = await newSet(base.id);
    // Earlier tests of this file generated once already.
    const { body } = await org.admin.get("/api/sets?limit=200");
    expect(body.total).toBeGreaterThan(0);
    let accepted = 0;
    let refused: { status: number; body: { error: { code: string } }; headers: Headers } | null = null;
    for (let i = 0; i < MAX_GENERATIONS_PER_HOUR + 1 && !refused; i++) {
      const res = await org.admin.post(`/api/sets/${setId}/generate`);
      if (res.status === 202) accepted++;
      else refused = res;
    }
    expect(refused?.status).toBe(429);
    expect(refused?.body.error.code).toBe("rate_limited");
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThan(3000);
    expect(accepted).toBe(MAX_GENERATIONS_PER_HOUR - 1);
    // Another organization is not affected.
    expect((await other.admin.post(`/api/sets/${otherSet}/generate`)).status).toBe(202);
  });
  test(`at most ${GENERATION_PIXELS_PER_MINUTE / 1e6} megapixels of renditions a minute; then 429 with Retry-After`, async () => {
    const { org: busy, setId } = await orgWithSet("Generating", [ONE_MEGAPIXEL]);
    // Generations asked for 10 s ago (recorded as the outbox records them, already handed over):
    // 1 megapixel short of the minute's budget.
    await earlier(busy.orgId, GENERATION_PIXELS_PER_MINUTE - 1_000_000, 10);
    // This set's megapixel fits exactly.
    expect((await busy.admin.post(`/api/sets/${setId}/generate`)).status).toBe(202);
    // The next does not: refused until the earliest of the minute is a minute old.
    const refused = await busy.admin.post(`/api/sets/${setId}/generate`);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(refused.body.error.message).toContain("megapixels of set renditions a minute");
    const retry = Number(refused.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(45);
    expect(retry).toBeLessThanOrEqual(60);
    // Another organization is not affected.
    const other = await orgWithSet("Quiet generator", [ONE_MEGAPIXEL]);
    expect((await other.org.admin.post(`/api/sets/${other.setId}/generate`)).status).toBe(202);
  });

  test("generations asked for more than a minute ago do not count towards the minute's budget", async () => {
    const { org: big, setId } = await orgWithSet("Earlier generations", [ONE_MEGAPIXEL]);
    // Ten minutes' worth, asked for two minutes ago.
    await earlier(big.orgId, 10 * GENERATION_PIXELS_PER_MINUTE, 120);
    expect((await big.admin.post(`/api/sets/${setId}/generate`)).status).toBe(202);
  });

  test("a set over a minute's worth needs as many quiet minutes as it spans", async () => {
    // Two items of 40 megapixels: two minutes' worth at the rate.
    const { org: large, setId } = await orgWithSet("Two minutes' worth", ["a", "b"].map((role) => ({ aspectRatio: "8:5", width: 8000, height: 5000, role })));
    // One megapixel asked for 90 s ago: outside the last minute, inside the last two.
    await earlier(large.orgId, 1_000_000, 90);
    const refused = await large.admin.post(`/api/sets/${setId}/generate`);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain("asked for in the last 2 minutes: 1");
    const retry = Number(refused.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(20);
    expect(retry).toBeLessThanOrEqual(30);
    // Refused, nothing was queued.
    const queued = await server.services.deps.db.execute(sql`select count(*)::int as n from job_outbox where name = 'sets.generate' and payload->>'setId' = ${setId}`);
    expect(rowsOf<{ n: number }>(queued)[0]?.n).toBe(0);
  });
});
