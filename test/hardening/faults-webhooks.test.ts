import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BullQueue } from "../../worker/bullmq-queue.ts";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { type Child, spawnScript } from "../support/processes.ts";
import { newOrg, startServer, type TestOrg, type TestServer, workerEnvFor } from "../support/server.ts";
import { type Receiver, startReceiver } from "../support/webhook-receiver.ts";

/**
 * A worker killed in the middle of a webhook delivery (the request sent, no answer
 * yet). Nothing is lost: the job runs again on another worker, which takes the lapsed claim
 * over and sends the same event again (same webhook-id: at least once), and the delivery is
 * recorded once, as succeeded. Separate processes share PostgreSQL and Redis, so this runs in
 * the services run only.
 */
const LOCK = { WORKER_LOCK_MS: "1500", WORKER_STALLED_INTERVAL_MS: "500" };
const HOOKS = { WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", WEBHOOK_TIMEOUT_MS: "1000", WEBHOOK_BACKOFF_MS: "100" };
const prefix = `${testEnv.redisPrefix}-faults-webhooks`;
const skip = !testEnv.redisUrl || !testEnv.databaseUrl;
const why = skip ? " (skipped: worker processes need the run's PostgreSQL and Redis)" : "";

let server: TestServer;
let org: TestOrg;
let rx: Receiver;
const children: Child[] = [];

describe.skipIf(skip)(`worker killed mid-delivery${why}`, () => {
  beforeAll(async () => {
    server = await startServer({ env: { WORKER_INLINE: "false", REDIS_PREFIX: prefix, ...LOCK, ...HOOKS } });
    org = await newOrg(server);
    rx = startReceiver();
  });
  afterAll(async () => {
    for (const c of children) c.proc.kill("SIGKILL");
    rx?.release();
    rx?.stop();
    await (server?.services.queue as BullQueue | undefined)?.obliterate().catch(() => {});
    await server?.stop();
  });

  test("the event is sent again by another worker and the delivery ends succeeded, once", async () => {
    const env = { ...workerEnvFor(server, prefix), ...LOCK, ...HOOKS };
    const created = await org.admin.post("/api/webhooks", { url: rx.url, eventTypes: ["bucket.created"] });
    rx.secret = created.body.secret;
    // The first request is held unanswered: the worker is killed while it waits.
    rx.respond = (_, n) => (n === 1 ? { hang: true } : 200);
    const doomed = spawnScript("worker/main.ts", env);
    children.push(doomed);
    const bucket = (await org.admin.post("/api/buckets", { name: "killed-mid-delivery" })).body;
    await eventually(async () => (rx.received.length === 1 ? true : undefined), { what: "the first request to arrive", timeoutMs: 90_000 });
    doomed.proc.kill("SIGKILL");
    await doomed.proc.exited;

    const rescuer = spawnScript("worker/main.ts", env);
    children.push(rescuer);
    const deliveries = await eventually(
      async () => {
        const list = (await org.admin.get(`/api/webhooks/${created.body.id}/deliveries`)).body.data;
        return list[0]?.status === "succeeded" ? list : undefined;
      },
      { what: "the delivery to succeed after the rescue", timeoutMs: 120_000 },
    );
    rescuer.proc.kill("SIGTERM");
    await rescuer.proc.exited;

    expect(rx.received).toHaveLength(2);
    const [first, second] = rx.received;
    expect(second!.id).toBe(first!.id);
    expect(second!.payload).toEqual(first!.payload);
    expect(first!.payload.data).toEqual({ bucketId: bucket.id, name: "killed-mid-delivery" });
    expect(rx.received.map((r) => r.verifyError)).toEqual([null, null]);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0].attempts).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, succeeded: true })]);
  }, 300_000);
});
