import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inArray, sql } from "drizzle-orm";
import { jobOutbox } from "../../db/schema/index.ts";
import type { Deps } from "../../domain/core/deps.ts";
import { aroundGenerate } from "../support/around-generate.ts";
import { eventually, WAIT_CEILING_MS } from "../support/eventually.ts";
import { Api } from "../support/http.ts";
import { png } from "../support/media-files.ts";
import { freePort, START_CEILING_MS, spawnScript, TEST_PICTURE_PRIORITY, untilServing } from "../support/processes.ts";
import { JWT_SECRET } from "../support/env.ts";
import { newOrg, seedDataDir, signJwt, startServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * The embedded default (no Redis): jobs run inside the server. Shutdown finishes the job in
 * hand and hands the others back; a killed server's jobs run after the next start.
 */
const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const jobsOf = async (deps: Deps, objectIds: string[]) =>
  deps.db
    .select()
    .from(jobOutbox)
    .where(inArray(sql`${jobOutbox.payload}->>'objectId'`, objectIds));

describe("in-process queue", () => {
  test("SIGTERM-style close finishes the jobs in hand and returns the unstarted ones; the next start runs them", async () => {
    const dataDir = tempDir("media-inproc-");
    let release!: () => void;
    const inHand = new Promise<void>((r) => (release = r));
    const started: string[] = [];
    const holding = aroundGenerate(async (objectId, work) => {
      started.push(objectId);
      await inHand;
      await work();
    });
    const first = await startServer({ embedded: true, dataDir, env: { WORKER_CONCURRENCY: "1" }, processors: holding });
    const org = await newOrg(first);
    const bucket = (await org.admin.post("/api/buckets", { name: "b" })).body;
    const objects = [];
    for (const key of ["one.png", "two.png", "three.png"]) objects.push(await upload(org.admin, bucket.id, key, await png(64, 64), { contentType: "image/png" }));
    // One decoding slot, two jobs in hand: the second reads its object while the first decodes.
    await eventually(async () => (started.length === 2 ? true : undefined), { what: "two jobs to start" });

    const stopping = first.stop();
    await Bun.sleep(300);
    expect(started).toHaveLength(2); // nothing new starts while closing
    release();
    await stopping;

    // A claim lapses after the next server's WORKER_LOCK_MS; ten minutes, far past the waits
    // below, so the jobs are ready in time only if the close gave them back.
    const second = await startServer({ embedded: true, dataDir, env: { WORKER_LOCK_MS: "600000" } });
    try {
      const deps = second.services.deps;
      const jobs = await jobsOf(deps, objects.map((o) => o.id));
      for (const id of started) {
        const inHandJob = jobs.find((j) => (j.payload as { objectId: string }).objectId === id)!;
        expect(inHandJob.doneAt).not.toBeNull(); // finished before the close returned
      }
      const api = new Api(second.url, org.adminKey.secret);
      for (const o of objects) {
        await eventually(async () => ((await api.get(`/api/media/${o.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: `${o.id} ready` });
      }
      // the returned jobs ran at once on the next start, not after a lock expired
      expect((await jobsOf(deps, objects.map((o) => o.id))).every((j) => j.doneAt && !j.error)).toBe(true);
    } finally {
      await second.stop();
    }
  }, 5 * WAIT_CEILING_MS);

  test("a server killed mid-job (SIGKILL) loses nothing: the job runs after the next start", async () => {
    const dataDir = tempDir("media-inproc-kill-");
    await seedDataDir(dataDir);
    // Rendering at normal priority, as every test's server does: in the idle class, beside four
    // busy loops, the restarted server had not made the thumbnail 60 s after its start.
    const env = async () => ({ DATA_DIR: dataDir, PORT: String(await freePort()), STORAGE_PORT: String(await freePort()), JWT_SECRET, WORKER_LOCK_MS: "1500", ...TEST_PICTURE_PRIORITY });
    const doomed = spawnScript("test/support/job-process.ts", { ...(await env()), ROLE: "server" });
    try {
      const url = (await doomed.waitFor(/ready (http\S+)/, START_CEILING_MS))[1]!;
      const owner = new Api(url, await signJwt({ sub: crypto.randomUUID(), org_id: crypto.randomUUID(), org_name: "Killed" }));
      const bucket = (await owner.post("/api/buckets", { name: "b" })).body;
      const obj = await upload(owner, bucket.id, "kill.png", await png(640, 320), { contentType: "image/png" });
      await doomed.waitFor(new RegExp(`started ${obj.id}`));
      doomed.proc.kill("SIGKILL");
      await doomed.proc.exited;

      const nextEnv = await env();
      const next = spawnScript("app/main.ts", nextEnv);
      try {
        const api = new Api(`http://127.0.0.1:${nextEnv.PORT}`, owner.token);
        await untilServing(next, `${api.baseUrl}/healthz`, { what: "the restarted server to answer /healthz" });
        const settled = await eventually(
          async () => {
            const res = await api.get(`/api/media/${obj.id}`);
            return res.body?.thumbnail?.state === "ready" ? res.body : undefined;
          },
          { what: "the killed job to run again" },
        );
        expect(settled.thumbnail).toMatchObject({ width: 320, height: 160 });
        expect(settled.info).toMatchObject({ width: 640, height: 320 });
      } finally {
        next.proc.kill("SIGTERM");
        await next.proc.exited;
      }
    } finally {
      doomed.proc.kill("SIGKILL");
    }
  }, 2 * START_CEILING_MS + 3 * WAIT_CEILING_MS);
});
