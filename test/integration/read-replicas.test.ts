// One pass: it makes its own PostgreSQL primary and streaming replica; the run's backends play no part.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { ReplicaReads } from "../../db/replicas.ts";
import { eventually } from "../support/eventually.ts";
import { startReplicaPair, type ReplicaPair } from "../support/replica-pair.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * DATABASE_READ_URL against a real streaming replica (initdb, pg_basebackup -R, pg_ctl, as the
 * postgres system user, in a temporary directory). Two servers share the pair: `patient`
 * accepts a replica up to 30 s behind, so while replay is paused it keeps reading the old
 * state (the proof that reads come from the replica); `strict` accepts 500 ms, so the same
 * pause sends its reads to the primary.
 */
let pair: ReplicaPair;
let patient: TestServer;
let strict: TestServer;
let org: TestOrg;
let bucketId: string;
/** An organization with one object, which writes nothing through `patient`. */
let reader: TestOrg;
let readerBucket: string;
let readerObject: string;

const routerOf = (s: TestServer) => s.services.deps.reads as ReplicaReads;
const asOrg = (s: TestServer) => s.api.withToken(org.adminKey.secret);
const nameOf = async (s: TestServer) => {
  const res = await asOrg(s).get(`/api/buckets/${bucketId}`);
  expect(res.status).toBe(200);
  return res.body.name as string;
};

beforeAll(async () => {
  pair = await startReplicaPair();
  const env = (maxLag: string) => ({ DATABASE_URL: pair.primaryUrl, DATABASE_READ_URL: pair.replicaUrl, DB_READ_MAX_LAG_MS: maxLag });
  strict = await startServer({ env: env("500") });
  patient = await startServer({ env: env("30000") });
  // Made through `strict`: `patient` has not seen this organization write.
  org = await newOrg(strict);
  const made = await org.admin.post("/api/buckets", { name: "before" });
  expect(made.status).toBe(201);
  bucketId = made.body.id;
  await upload(org.admin, bucketId, "first-report.txt", "the first one");
  reader = await newOrg(strict);
  readerBucket = (await reader.admin.post("/api/buckets", { name: "reader" })).body.id;
  readerObject = (await upload(reader.admin, readerBucket, "one.txt", "12345")).id;
  await pair.caughtUp();
  // A server takes the replica in at its next lag check (on a busy machine, after a few): the
  // tests start from a replica that serves `patient` (within 30 s of the primary it always may).
  await eventually(async () => (routerOf(patient).servingCount() === 1 ? true : undefined), { what: "the replica to serve patient's reads", timeoutMs: 60_000 });
}, 180_000);

afterAll(async () => {
  await pair?.resumeReplay().catch(() => {});
  await patient?.stop();
  await strict?.stop();
  await pair?.remove();
}, 120_000);

describe("read replicas (DATABASE_READ_URL)", () => {
  test("lists, gets, searches and usage are served by the replica: with replay paused, changes made on the primary are not seen", async () => {
    expect(routerOf(patient).servingCount()).toBe(1);
    expect(await nameOf(patient)).toBe("before");
    await pair.pauseReplay();
    await pair.primary`update buckets set name = 'changed on the primary' where id = ${bucketId}`;
    // The replica has not replayed the update, and the primary has it: reading "before" proves the replica answered.
    expect(await nameOf(patient)).toBe("before");
    const listed = await asOrg(patient).get("/api/buckets");
    expect(listed.body.data.map((b: { name: string }) => b.name)).toContain("before");
    // An upload through the other instance: the primary has it, the paused replica does not,
    // so `patient`'s list, search and usage report still show one object.
    await upload(org.admin, bucketId, "second-report.txt", "the second one");
    const keys = async (s: TestServer) => (await asOrg(s).get(`/api/media?bucketId=${bucketId}`)).body.data.map((o: { key: string }) => o.key).sort();
    expect(await keys(patient)).toEqual(["first-report.txt"]);
    expect(await keys(strict)).toEqual(["first-report.txt", "second-report.txt"]);
    const found = await asOrg(patient).get("/api/search?q=report");
    expect(found.status).toBe(200);
    expect(found.body.media.map((o: { key: string }) => o.key)).toEqual(["first-report.txt"]);
    const usage = await asOrg(patient).get("/api/usage");
    expect(usage.body.objectCount).toBe(1);
    const readers = await pair.replica`select count(*)::int as n from pg_stat_activity where application_name = 'media-read'`;
    expect(readers[0]!.n).toBeGreaterThan(0);
  });

  test("a caller reads its own writes at once, while the replica is still paused", async () => {
    const made = await asOrg(patient).post("/api/buckets", { name: "written-by-patient" });
    expect(made.status).toBe(201);
    const got = await asOrg(patient).get(`/api/buckets/${made.body.id}`);
    expect(got.status).toBe(200);
    const listed = await asOrg(patient).get("/api/buckets?limit=100");
    expect(listed.body.data.map((b: { name: string }) => b.name)).toEqual(expect.arrayContaining(["written-by-patient", "changed on the primary"]));
    // Another organization, which wrote nothing, still reads the paused replica.
    const other = await newOrg(strict);
    const mine = await other.admin.post("/api/buckets", { name: "others" });
    expect(mine.status).toBe(201);
    expect((await patient.api.withToken(other.adminKey.secret).get(`/api/buckets/${mine.body.id}`)).status).toBe(404);
  });

  test("a download URL keeps its organization's usage report on the primary, and nothing else", async () => {
    await upload(reader.admin, readerBucket, "two.txt", "678");
    const asReader = patient.api.withToken(reader.adminKey.secret);
    const url = await asReader.post("/api/presign/download", { objectId: readerObject });
    expect(url.status).toBe(200);
    // The usage report counts the egress this instance just recorded (and the second upload: it reads the primary)...
    const usage = await asReader.get("/api/usage");
    expect(usage.body).toMatchObject({ egressThisMonth: 5, objectCount: 2 });
    // ...while the organization's list still comes from the paused replica.
    const listed = await asReader.get(`/api/media?bucketId=${readerBucket}`);
    expect({ status: listed.status, error: listed.body.error }).toEqual({ status: 200, error: undefined });
    expect(listed.body.data.map((o: { key: string }) => o.key)).toEqual(["one.txt"]);
  });

  test("a replica further behind than DB_READ_MAX_LAG_MS serves nothing: reads fall back to the primary", async () => {
    // Replay is still paused and the primary has moved on.
    await eventually(async () => (routerOf(strict).servingCount() === 0 ? true : undefined), { what: "the strict server to stop reading from the paused replica" });
    expect(await nameOf(strict)).toBe("changed on the primary");
    await pair.resumeReplay();
    await eventually(async () => (routerOf(strict).servingCount() === 1 ? true : undefined), { what: "the replica to serve again once it caught up" });
    expect(await nameOf(patient)).toBe("changed on the primary");
  });

  test("a replica that is down serves nothing: reads fall back to the primary, and it serves again once back", async () => {
    pair.stopReplica();
    await pair.primary`update buckets set name = 'while the replica was down' where id = ${bucketId}`;
    for (const server of [patient, strict]) {
      // Reads that were on their way to the replica when it stopped may fail (503); the next check, or such a failure, takes it out.
      await eventually(async () => (routerOf(server).servingCount() === 0 ? true : undefined), { what: "the stopped replica to be taken out of service" });
      expect(await nameOf(server)).toBe("while the replica was down");
      expect((await asOrg(server).get("/api/buckets?limit=100")).status).toBe(200);
    }
    await pair.startReplica();
    await eventually(async () => (routerOf(patient).servingCount() === 1 ? true : undefined), { what: "the replica to serve again after its restart" });
    expect(await nameOf(patient)).toBe("while the replica was down");
  });

  test("a read that finds the replica gone takes it out at once, without waiting for the next check", async () => {
    // Checked by hand only (no start()): nothing but the failed read can take it out.
    const router = new ReplicaReads({ primaryUrl: pair.primaryUrl, urls: [pair.replicaUrl], maxLagMs: 60_000, poolSize: 2, statementTimeoutMs: 0, searchPoolSize: 1, searchStatementTimeoutMs: 0 });
    try {
      await router.check();
      const db = router.replicaFor(org.orgId, "data");
      expect(db).not.toBeNull();
      await db!.execute(sql`select 1`);
      pair.stopReplica();
      const failed = await db!.execute(sql`select 1`).then(
        () => null,
        (err: unknown) => err,
      );
      expect(failed).not.toBeNull();
      expect(router.servingCount()).toBe(0);
      expect(router.replicaFor(org.orgId, "data")).toBeNull();
    } finally {
      await router.close();
      await pair.startReplica();
    }
  });
});
