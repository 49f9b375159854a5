// One pass: it makes its own PostgreSQL primary and streaming replica; the run's backends play no part.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Db } from "../../db/client.ts";
import type { ReplicaReads } from "../../db/replicas.ts";
import { eventually } from "../support/eventually.ts";
import { freePort } from "../support/processes.ts";
import { startReplicaPair, type ReplicaPair } from "../support/replica-pair.ts";
import { newOrg, startServer, type TestServer } from "../support/server.ts";

/**
 * DATABASE_READ_URL with more than one replica, comma-separated (docs/scaling.md): each replica
 * that is within the bound takes reads, one that is down among them takes none, and an
 * organization keeps to one replica while it serves. The list names the test's one streaming
 * replica twice (two pools, as two replicas would be) and a port nothing listens on.
 */
let pair: ReplicaPair;
let server: TestServer;

const routerOf = (s: TestServer) => s.services.deps.reads as ReplicaReads;

beforeAll(async () => {
  pair = await startReplicaPair();
  const down = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
  server = await startServer({
    env: { DATABASE_URL: pair.primaryUrl, DATABASE_READ_URL: `${pair.replicaUrl}, ${pair.replicaUrl},${down}`, DB_READ_MAX_LAG_MS: "10000" },
  });
  await eventually(async () => (routerOf(server).servingCount() === 2 ? true : undefined), { what: "both listed replicas that are up to serve reads", timeoutMs: 60_000 });
}, 180_000);

afterAll(async () => {
  await pair?.resumeReplay().catch(() => {});
  await server?.stop();
  await pair?.remove();
}, 120_000);

describe("several read replicas (DATABASE_READ_URL, comma-separated)", () => {
  test("each replica up serves, the one down serves nothing, and an organization keeps to one replica", () => {
    const router = routerOf(server);
    expect(router.servingCount()).toBe(2);
    const used = new Set<Db>();
    for (let i = 0; i < 64; i++) {
      const orgId = crypto.randomUUID();
      const first = router.replicaFor(orgId, "data");
      expect(first).not.toBeNull();
      for (let j = 0; j < 3; j++) expect(router.replicaFor(orgId, "data")).toBe(first);
      const search = router.replicaFor(orgId, "search");
      expect(search).not.toBeNull();
      expect(router.replicaFor(orgId, "search")).toBe(search);
      used.add(first!);
    }
    // Organizations spread over both replicas that serve.
    expect(used.size).toBe(2);
  });

  test("an organization's reads through the API come from a replica while the one listed down is skipped", async () => {
    const org = await newOrg(server);
    const made = await org.admin.post("/api/buckets", { name: "before" });
    expect(made.status).toBe(201);
    // Its own write keeps its reads on the primary for the bound; then a replica takes them.
    await eventually(async () => (routerOf(server).replicaFor(org.orgId, "data") ? true : undefined), { what: "the organization's reads to leave the primary after its write" });
    await pair.caughtUp();
    await pair.pauseReplay();
    try {
      await pair.primary`update buckets set name = 'changed on the primary' where id = ${made.body.id}`;
      // The paused replica answers "before"; the primary would answer the change.
      const got = await org.admin.get(`/api/buckets/${made.body.id}`);
      expect({ status: got.status, name: got.body.name }).toEqual({ status: 200, name: "before" });
    } finally {
      await pair.resumeReplay();
    }
  });
});
