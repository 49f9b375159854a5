import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import type { Logger } from "../../domain/ports/log.ts";
import { testEnv, JWT_SECRET } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { privateRedis, redisServerPath } from "../support/faults.ts";
import { type Child, freePort, spawnScript } from "../support/processes.ts";
import { startServer } from "../support/server.ts";

/**
 * What the probes say while a server starts and while a dependency it works without is down.
 * An instance waiting for another's migration logs so, answers /healthz (a liveness probe must
 * not restart it mid-wait) and says "starting" on /readyz, on PORT and METRICS_PORT alike.
 * With Redis down an API server still serves (guards fail open, jobs wait in the outbox), so it
 * stays ready and its /readyz names redis as degraded.
 */
const children: Child[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const c of children) c.proc.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const MIGRATION_LOCK = 727_001;

async function get(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.json() };
}

test.skipIf(!testEnv.databaseUrl)("an instance waiting for another's migration logs it, answers /healthz and is not ready until it has migrated", async () => {
  const admin = postgres(testEnv.databaseUrl!, { max: 1, onnotice: () => {} });
  const name = `media_startwait_${process.pid}_${Date.now()}`;
  const url = new URL(testEnv.databaseUrl!);
  url.pathname = `/${name}`;
  await admin.unsafe(`create database ${name}`);
  // Another instance migrating: it holds the migration lock on that database.
  const other = postgres(url.toString(), { max: 1, onnotice: () => {} });
  try {
    await other`select pg_advisory_lock(${MIGRATION_LOCK})`;
    const dataDir = mkdtempSync(join(tmpdir(), "media-startwait-"));
    dirs.push(dataDir);
    const [port, ops] = [await freePort(), await freePort()];
    const child = spawnScript("app/main.ts", {
      DATABASE_URL: url.toString(),
      DATA_DIR: dataDir,
      PORT: String(port),
      METRICS_PORT: String(ops),
      STORAGE_PORT: String(await freePort()),
      JWT_SECRET,
      LOG_LEVEL: "info",
    });
    children.push(child);
    await eventually(async () => (child.errors().includes(`"msg":"waiting for another instance's migration (advisory lock)"`) ? true : undefined), {
      what: "the wait to be logged",
    });
    for (const base of [`http://127.0.0.1:${port}`, `http://127.0.0.1:${ops}`]) {
      expect(await get(`${base}/healthz`)).toEqual({ status: 200, body: { status: "ok" } });
      expect(await get(`${base}/readyz`)).toEqual({ status: 503, body: { status: "starting" } });
    }
    const api = await get(`http://127.0.0.1:${port}/api/me`);
    expect([api.status, api.body.error.code]).toEqual([503, "unavailable"]);

    await other`select pg_advisory_unlock(${MIGRATION_LOCK})`;
    for (const base of [`http://127.0.0.1:${port}`, `http://127.0.0.1:${ops}`]) {
      const ready = await eventually(async () => {
        const r = await get(`${base}/readyz`).catch(() => null);
        return r?.status === 200 ? r : undefined;
      }, { what: `${base}/readyz to say ready` });
      expect(ready.body.status).toBe("ready");
    }
    child.proc.kill("SIGTERM");
    expect(await child.finished()).toBe(0);
  } finally {
    await other.end();
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}, 120_000);

test.skipIf(!redisServerPath)("Redis down: an API server stays ready, its /readyz names redis as degraded, and the log says it serves fail-open", async () => {
  const redis = await privateRedis();
  const lines: string[] = [];
  const record = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`);
  const log: Logger = { debug: () => {}, info: record("info"), warn: record("warn"), error: record("error") };
  const server = await startServer({ embedded: true, log, env: { REDIS_URL: redis.url, REDIS_PREFIX: `startup-probes-${process.pid}`, WORKER_INLINE: "false" } });
  try {
    expect((await get(`${server.url}/readyz`)).body).toMatchObject({ status: "ready", checks: { redis: { ok: true } } });
    await redis.kill();
    const degraded = await eventually(async () => {
      const r = await get(`${server.url}/readyz`);
      return r.body.degraded ? r : undefined;
    }, { what: "redis to be reported degraded" });
    expect(degraded.status).toBe(200);
    expect(degraded.body).toMatchObject({ status: "ready", degraded: ["redis"], checks: { redis: { ok: false }, postgres: { ok: true }, storage: { ok: true } } });
    expect(degraded.body.failed).toBeUndefined();
    expect(lines.some((l) => l.startsWith("warn readiness check failed; still ready, serving without it (fail-open)") && l.includes('"check":"redis"'))).toBe(true);
    await redis.start();
    await eventually(async () => {
      const r = await get(`${server.url}/readyz`);
      return r.status === 200 && !r.body.degraded ? r : undefined;
    }, { what: "redis to be reported back" });
  } finally {
    await server.stop();
    await redis.destroy();
  }
}, 120_000);
