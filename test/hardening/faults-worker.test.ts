import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { derivativePrefix } from "../../domain/media/storage-keys.ts";
import type { S3Storage } from "../../storage/s3.ts";
import type { BullQueue } from "../../worker/bullmq-queue.ts";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { png } from "../support/media-files.ts";
import { type Child, spawnScript } from "../support/processes.ts";
import { newOrg, startServer, type TestOrg, type TestServer, workerEnvFor } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * A worker killed mid-job. test/integration/bullmq-worker.test.ts already shows
 * a job taken over when its worker is killed before doing the work; this is the other window:
 * killed after the thumbnail was stored and recorded, before BullMQ heard the job complete.
 * The job runs again on another worker, and the derivative still exists once, unchanged.
 * Separate processes share PostgreSQL and Redis, so this runs in the services run only.
 */
const LOCK = { WORKER_LOCK_MS: "1500", WORKER_STALLED_INTERVAL_MS: "500" };
const prefix = `${testEnv.redisPrefix}-faults-worker`;
let server: TestServer;
let org: TestOrg;
let bucket: { id: string };
let workerEnv: Record<string, string>;
const children: Child[] = [];

async function derivativeObjects(objectId: string): Promise<string[]> {
  const storage = server.services.deps.storage as S3Storage;
  const out = await storage.client.send(new ListObjectsV2Command({ Bucket: server.config.s3.bucket, Prefix: derivativePrefix(bucket.id, objectId) }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

const skip = !testEnv.redisUrl || !testEnv.databaseUrl;
const why = skip ? " (skipped: worker processes need the run's PostgreSQL and Redis)" : "";

describe.skipIf(skip)(`worker killed after producing, before completing${why}`, () => {
  beforeAll(async () => {
    server = await startServer({ env: { WORKER_INLINE: "false", REDIS_PREFIX: prefix, ...LOCK } });
    org = await newOrg(server);
    bucket = (await org.admin.post("/api/buckets", { name: "killed-late" })).body;
    workerEnv = {
      ...workerEnvFor(server, prefix),
      WORKER_BACKOFF_MS: "100",
      ...LOCK,
    };
  });
  afterAll(async () => {
    for (const c of children) c.proc.kill("SIGKILL");
    await (server?.services.queue as BullQueue | undefined)?.obliterate().catch(() => {});
    await server?.stop();
  });

  test("the job is run again elsewhere and the thumbnail exists once, as it was", async () => {
    const doomed = spawnScript("test/support/faults-worker.ts", workerEnv);
    children.push(doomed);
    await doomed.waitFor(/ready worker/);
    const obj = await upload(org.admin, bucket.id, "late/kill.png", await png(640, 320), { contentType: "image/png" });
    await doomed.waitFor(new RegExp(`generated ${obj.id}`));
    const produced = (await org.admin.get(`/api/media/${obj.id}`)).body.thumbnail;
    expect(produced).toMatchObject({ state: "ready", width: 320, height: 160 });
    expect(await derivativeObjects(obj.id)).toHaveLength(1);
    doomed.proc.kill("SIGKILL");
    await doomed.proc.exited;

    const queue = (server.services.queue as BullQueue).queueFor("derivatives.generate");
    const [job] = (await queue.getJobs(["active", "wait", "delayed", "completed"])).filter((j) => j.data.objectId === obj.id);
    expect(job).toBeDefined();
    const rescuer = spawnScript("worker/main.ts", workerEnv);
    children.push(rescuer);
    await eventually(async () => ((await queue.getJobState(job!.id!)) === "completed" ? true : undefined), {
      what: "the job to be run again and completed",
      // A new worker process starts, then waits out the dead one's lock: slow on a busy machine.
      timeoutMs: 120_000,
    });
    rescuer.proc.kill("SIGTERM");
    await rescuer.proc.exited;

    expect((await org.admin.get(`/api/media/${obj.id}`)).body.thumbnail).toEqual(produced);
    expect(await derivativeObjects(obj.id)).toHaveLength(1);
    const thumb = await fetch(`${server.url}/api/media/${obj.id}/thumbnail`, { headers: { authorization: `Bearer ${org.adminKey.secret}` } });
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get("etag")).toContain(produced.etag);
  }, 240_000);
});
