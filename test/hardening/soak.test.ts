import { afterAll, beforeAll, expect, test } from "bun:test";
import { runSoak, usageNow } from "../../bench/_soak.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * A short soak: the load of `npm run bench -- soak` for SOAK_TEST_SECONDS
 * (default 15) at a steady rate. No answer may be an error, and usage must be exact: storage
 * used equals the sum of the sizes confirmed, egress the sizes of the downloads issued, API
 * calls the requests made. Memory and latency are the bench's business (bench/results/soak.md).
 */
const SECONDS = Number(process.env.SOAK_TEST_SECONDS ?? 15);
const RATE = Number(process.env.SOAK_TEST_RATE ?? 20);

let server: TestServer;
let org: TestOrg;
let bucket: { id: string };

beforeAll(async () => {
  server = await startServer();
  org = await newOrg(server);
  bucket = (await org.admin.post("/api/buckets", { name: "soak" })).body;
});
afterAll(() => server.stop());

test(`${SECONDS} s of mixed reads, writes and presigns at ${RATE}/s: no errors, no lost usage`, async () => {
  const before = await usageNow(server, org);
  const run = await runSoak(server, org, bucket.id, { seconds: SECONDS, rate: RATE });
  const after = await usageNow(server, org);

  expect(run.errors).toEqual([]);
  expect(run.operations).toBe(Math.round(SECONDS * RATE));
  expect(run.uploads).toBeGreaterThan(0);
  expect(after.usedStorage - before.usedStorage).toBe(run.bytesConfirmed);
  expect(after.objectCount - before.objectCount).toBe(run.uploads);
  expect(after.egressThisMonth - before.egressThisMonth).toBe(run.egressIssued);
  // The first usage read is counted too; it was still in memory when it answered.
  expect(after.apiCallsThisMonth - before.apiCallsThisMonth).toBe(run.apiCalls + 1);
}, (SECONDS + 45) * 1000);
