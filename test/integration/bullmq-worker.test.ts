import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { Queue } from "bullmq";
import Redis from "ioredis";
import { type BullQueue, LEGACY_QUEUE_NAME } from "../../worker/bullmq-queue.ts";
import { testEnv } from "../support/env.ts";
import { eventually, WAIT_CEILING_MS } from "../support/eventually.ts";
import { png } from "../support/media-files.ts";
import { type Child, spawnScript } from "../support/processes.ts";
import { newOrg, startServer, type TestOrg, type TestServer, workerEnvFor } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * `npm run worker` on BullMQ: separate processes run what the server produces. Needs Redis
 * and PostgreSQL (shared by the processes), so it runs in the PostgreSQL + Redis run of
 * `npm test` only and is skipped in the embedded run.
 */
const LOCK = { WORKER_LOCK_MS: "1500", WORKER_STALLED_INTERVAL_MS: "500" };
const prefix = `${testEnv.redisPrefix}-workers`;
let server: TestServer;
let org: TestOrg;
let bucket: { id: string };
let workerEnv: Record<string, string>;
const children: Child[] = [];

describe.skipIf(!testEnv.redisUrl || !testEnv.databaseUrl)("BullMQ workers in their own processes", () => {
  beforeAll(async () => {
    // The server only produces: its jobs run wherever `npm run worker` runs.
    server = await startServer({ env: { WORKER_INLINE: "false", REDIS_PREFIX: prefix, ...LOCK } });
    expect(server.services.backends).toMatchObject({ queue: "bullmq", jobs: "elsewhere" });
    org = await newOrg(server);
    bucket = (await org.admin.post("/api/buckets", { name: "worked" })).body;
    // Workers reach the same database, Redis and storage as the server.
    workerEnv = {
      ...workerEnvFor(server, prefix),
      // Leftover jobs of other test files (their storage is gone) must not hold the slots.
      WORKER_CONCURRENCY: "8",
      WORKER_BACKOFF_MS: "100",
      ...LOCK,
    };
  });
  afterAll(async () => {
    for (const c of children) c.proc.kill("SIGKILL");
    await (server.services.queue as BullQueue | undefined)?.obliterate().catch(() => {});
    await server?.stop();
  });

  const start = (script: string, extra: Record<string, string> = {}, prefix: string[] = []) => {
    const child = spawnScript(script, { ...workerEnv, ...extra }, prefix);
    children.push(child);
    return child;
  };
  const state = async (id: string) => (await org.admin.get(`/api/media/${id}`)).body.thumbnail?.state;

  // Started as a service manager starts it, in a session of its own (where Linux has setsid and autogroups).
  const ownSession = Bun.which("setsid") && existsSync("/proc/self/autogroup") ? [Bun.which("setsid")!] : [];

  test("npm run worker runs the jobs at WORKER_NICE, every thread of it, and its own session's autogroup too; SIGTERM stops it cleanly", async () => {
    // At a niceness of its own, as deployed; the other tests leave it at 0 (TEST_PICTURE_PRIORITY).
    // Not in the idle class: beside busy work at normal priority, an idle-class picture host
    // gets next to no CPU, and CI beside four busy loops waited a minute for this thumbnail in
    // vain. The idle class has its own test (test/unit/niced-host.test.ts).
    const worker = start("worker/main.ts", { LOG_LEVEL: "info", WORKER_NICE: "6", WORKER_SCHED_IDLE: "false" }, ownSession);
    try {
      const obj = await upload(org.admin, bucket.id, "w/one.png", await png(640, 480), { contentType: "image/png" });
      await eventually(async () => ((await state(obj.id)) === "ready" ? true : undefined), { what: "the worker to make the thumbnail" });
      // Linux keeps a priority per thread: the ones started after the worker lowered its own inherit it.
      const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(") ") + 2).split(" ")[16]);
      const tasks = readdirSync(`/proc/${worker.proc.pid}/task`).map((t) => niceOf(readFileSync(`/proc/${worker.proc.pid}/task/${t}/stat`, "utf8")));
      expect(new Set(tasks)).toEqual(new Set([6]));
      // Autogroups share the CPU between sessions before niceness counts (worker/derivatives/nice-command.ts).
      if (ownSession.length) expect(readFileSync(`/proc/${worker.proc.pid}/autogroup`, "utf8").trim()).toMatch(/ nice 6$/);
      worker.proc.kill("SIGTERM");
      expect(await worker.proc.exited).toBe(0);
      expect(worker.errors()).toContain('"msg":"worker stopped"');
    } finally {
      // A worker left running after a failure would take the next tests' jobs.
      if (worker.proc.exitCode === null) worker.proc.kill("SIGKILL");
    }
  }, 3 * WAIT_CEILING_MS);

  test("a worker killed mid-job (SIGKILL) loses nothing: another worker takes the job over", async () => {
    const doomed = start("test/support/job-process.ts", { ROLE: "worker" });
    await doomed.waitFor(/ready worker/);
    const obj = await upload(org.admin, bucket.id, "w/killed.png", await png(500, 250), { contentType: "image/png" });
    await doomed.waitFor(new RegExp(`started ${obj.id}`));
    doomed.proc.kill("SIGKILL");
    await doomed.proc.exited;
    expect(await state(obj.id)).toBe("pending");
    const rescuer = start("worker/main.ts");
    const res = await eventually(
      async () => {
        const r = await org.admin.get(`/api/media/${obj.id}`);
        return r.body.thumbnail.state === "ready" ? r.body : undefined;
      },
      { what: "the stalled job to be taken over", timeoutMs: WAIT_CEILING_MS },
    );
    expect(res.thumbnail).toMatchObject({ width: 320, height: 160 });
    rescuer.proc.kill("SIGTERM");
    await rescuer.proc.exited;
  }, 3 * WAIT_CEILING_MS);

  test("SIGTERM mid-job: the worker finishes the job in hand before it exits", async () => {
    const worker = start("test/support/job-process.ts", { ROLE: "worker", HOLD_MS: "1500" });
    await worker.waitFor(/ready worker/);
    const obj = await upload(org.admin, bucket.id, "w/graceful.png", await png(300, 300), { contentType: "image/png" });
    await worker.waitFor(new RegExp(`started ${obj.id}`));
    worker.proc.kill("SIGTERM");
    expect(await worker.proc.exited).toBe(0);
    expect(worker.output()).toMatch(new RegExp(`finished ${obj.id}[\\s\\S]*closed`));
    expect(await state(obj.id)).toBe("ready");
  }, 3 * WAIT_CEILING_MS);

  test("a job whose worker dies in it twice is failed, and its thumbnail says so instead of staying pending", async () => {
    const obj = await upload(org.admin, bucket.id, "w/poison.png", await png(100, 100), { contentType: "image/png" });
    for (let i = 0; i < 2; i++) {
      const doomed = start("test/support/job-process.ts", { ROLE: "worker" });
      await doomed.waitFor(new RegExp(`started ${obj.id}`), 20_000);
      doomed.proc.kill("SIGKILL");
      await doomed.proc.exited;
    }
    const checker = start("worker/main.ts");
    await eventually(async () => ((await state(obj.id)) === "failed" ? true : undefined), { what: "the job to be given up", timeoutMs: WAIT_CEILING_MS });
    const res = await org.admin.get(`/api/media/${obj.id}/thumbnail`);
    expect(res.body.error).toMatchObject({ code: "thumbnail_unavailable", details: { state: "failed" } });
    expect(res.body.error.message).toContain("worker stopped while processing this file");
    checker.proc.kill("SIGTERM");
    await checker.proc.exited;
  }, 3 * WAIT_CEILING_MS);

  test("a job an older release put in the one queue it knew (<prefix>:jobs) is run by this release's worker: a rolling upgrade strands nothing", async () => {
    const obj = await upload(org.admin, bucket.id, "w/legacy.png", await png(200, 100), { contentType: "image/png" });
    // As an API instance of the previous release queues it: the same job, in the legacy queue.
    const classQueue = (server.services.queue as BullQueue).queueFor("derivatives.generate");
    const queued = await eventually(async () => (await classQueue.getJobs(["wait", "prioritized"])).find((j) => j.data.objectId === obj.id), { what: "the job to be queued" });
    await queued.remove();
    const connection = new Redis(testEnv.redisUrl!, { maxRetriesPerRequest: null });
    const legacy = new Queue(LEGACY_QUEUE_NAME, { connection, prefix });
    try {
      await legacy.add(queued.name, queued.data, { jobId: queued.id, attempts: 3 });
      const worker = start("worker/main.ts");
      await eventually(async () => ((await state(obj.id)) === "ready" ? true : undefined), { what: "the legacy queue's job to be run" });
      // The thumbnail is ready when the job writes it; BullMQ marks the job completed a moment later.
      await eventually(async () => ((await legacy.getJobState(queued.id!)) === "completed" ? true : undefined), {
        what: "the legacy queue's job to be marked completed",
      });
      worker.proc.kill("SIGTERM");
      await worker.proc.exited;
    } finally {
      await legacy.close();
      connection.disconnect();
    }
  }, 3 * WAIT_CEILING_MS);
});

describe.skipIf(!testEnv.redisUrl)("BullMQ's keeping of finished jobs (docs/worker.md, Failed jobs)", () => {
  test("failed jobs are kept 30 days (at most 10,000), completed ones a day (at most 1,000), under <prefix>:jobs-cpu and <prefix>:jobs-io by class, with the outbox row's id", async () => {
    const { BullQueue } = await import("../../worker/bullmq-queue.ts");
    const { loadConfig } = await import("../../app/config.ts");
    const retention = `${testEnv.redisPrefix}-retention`;
    const queue = new BullQueue({ redisUrl: testEnv.redisUrl, redisPrefix: retention, worker: loadConfig({}).worker });
    try {
      const id = crypto.randomUUID();
      const cpu = crypto.randomUUID();
      await queue.add({ id, name: "search.sync", data: { orgId: crypto.randomUUID(), objectIds: [] } });
      await queue.add({ id: cpu, name: "derivatives.generate", data: { orgId: crypto.randomUUID(), objectId: crypto.randomUUID() } });
      const job = await queue.getJob(id);
      expect(job?.id).toBe(id);
      expect({ removeOnFail: job!.opts.removeOnFail, removeOnComplete: job!.opts.removeOnComplete }).toEqual({
        removeOnFail: { age: 30 * 86_400, count: 10_000 },
        removeOnComplete: { age: 86_400, count: 1000 },
      });
      const redis = new (await import("ioredis")).default(testEnv.redisUrl!);
      try {
        expect(await redis.keys(`${retention}:jobs-io:*`)).toContain(`${retention}:jobs-io:${id}`);
        expect(await redis.keys(`${retention}:jobs-cpu:*`)).toContain(`${retention}:jobs-cpu:${cpu}`);
      } finally {
        redis.disconnect();
      }
    } finally {
      await queue.obliterate().catch(() => {});
      await queue.close();
    }
  });
});
