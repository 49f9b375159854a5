import { ping } from "../db/client.ts";
import type { Deps } from "../domain/core/deps.ts";
import type { RedisConnection } from "./redis.ts";

/**
 * Readiness: can this process do its work now? Each dependency it was configured with is
 * asked once, all at the same time, each with its own deadline, so a hung one costs the probe
 * `timeoutMs` and no more. Liveness (/healthz) asks nothing: a process that answers is alive,
 * and restarting it would not bring a database back.
 *
 * A dependency the process works without (`failOpen`: Redis for an API server, whose guards
 * fail open and whose jobs wait in the outbox) does not make it unready: taking every instance
 * out of rotation at once because of a shared Redis would stop an API that still serves. Its
 * failure is reported as `degraded` in the answer and logged once per outage.
 */

export type CheckName = "postgres" | "redis" | "queue" | "storage" | "meilisearch";

export interface Readiness {
  ready: boolean;
  /** Set while the process shuts down: load balancers should stop sending requests. */
  stopping: boolean;
  checks: Partial<Record<CheckName, { ok: boolean; ms: number; error?: string }>>;
  /** The checks that failed, by name. */
  failed: CheckName[];
  /** Failed checks of dependencies the process works without: ready, with less (Redis for a server). */
  degraded: CheckName[];
}

export interface ReadinessProbe {
  check(): Promise<Readiness>;
  /** From now on the process answers not ready (graceful shutdown). */
  markStopping(): void;
}

type Check = () => Promise<unknown>;

export function readinessProbe(
  deps: Pick<Deps, "db" | "storage" | "search" | "log">,
  opts: {
    redis: RedisConnection | null;
    /** The queues' own Redis (QUEUE_REDIS_URL), when it is not REDIS_URL's. */
    queue?: { ping(): Promise<unknown> } | null;
    timeoutMs: number;
    database: "postgres" | "pglite";
    failOpen?: CheckName[];
  },
): ReadinessProbe {
  const failOpen = new Set(opts.failOpen ?? []);
  const checks: Partial<Record<CheckName, Check>> = {
    // PGlite lives in this process: asking it still shows it is open and answering.
    postgres: () => ping(deps.db),
    storage: () => (deps.storage as { ping?: (ms: number) => Promise<void> }).ping?.(opts.timeoutMs) ?? Promise.resolve(),
  };
  const redis = opts.redis;
  if (redis) checks.redis = () => redis.client.ping();
  const queue = opts.queue;
  if (queue) checks.queue = () => queue.ping();
  const search = deps.search as { name: string; ping?: (ms: number) => Promise<void> };
  if (search.name === "meilisearch" && search.ping) checks.meilisearch = () => search.ping!(opts.timeoutMs);
  let stopping = false;
  const lastFailed = new Set<CheckName>();

  return {
    markStopping: () => {
      stopping = true;
    },
    async check() {
      const results = await Promise.all(
        (Object.entries(checks) as [CheckName, Check][]).map(async ([name, run]) => [name, await timed(run, opts.timeoutMs)] as const),
      );
      const out: Readiness = { ready: !stopping, stopping, checks: {}, failed: [], degraded: [] };
      for (const [name, result] of results) {
        out.checks[name] = result;
        if (!result.ok) {
          const degraded = failOpen.has(name);
          if (degraded) out.degraded.push(name);
          else {
            out.ready = false;
            out.failed.push(name);
          }
          // Logged once per outage, with the cause the probe's answer leaves out.
          if (!lastFailed.has(name)) {
            if (degraded) deps.log.warn("readiness check failed; still ready, serving without it (fail-open)", { check: name, error: result.cause });
            else deps.log.warn("readiness check failed", { check: name, error: result.cause });
          }
          lastFailed.add(name);
        } else if (lastFailed.delete(name)) deps.log.info("readiness check passes again", { check: name });
      }
      for (const r of Object.values(out.checks)) delete (r as { cause?: string }).cause;
      return out;
    },
  };
}

/**
 * The probe's answer names what failed and how (timed out, or failed), never the error text:
 * it is served without credentials, and driver messages carry addresses.
 */
async function timed(run: Check, timeoutMs: number): Promise<{ ok: boolean; ms: number; error?: string; cause?: string }> {
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    const outcome = await Promise.race([run().then(() => "ok" as const), deadline]);
    const ms = Math.round(performance.now() - started);
    return outcome === "ok" ? { ok: true, ms } : { ok: false, ms, error: `no answer within ${timeoutMs} ms`, cause: "timeout" };
  } catch (err) {
    return { ok: false, ms: Math.round(performance.now() - started), error: "unreachable or failing", cause: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

/** The probe's HTTP answer: 200 when ready (naming what it is degraded by, if anything), else 503 naming what failed. */
export function readinessResponse(r: Readiness): Response {
  const degraded = r.degraded.length > 0 ? { degraded: r.degraded } : {};
  const body = r.ready ? { status: "ready", ...degraded, checks: r.checks } : { status: r.stopping ? "stopping" : "unavailable", failed: r.failed, ...degraded, checks: r.checks };
  return new Response(JSON.stringify(body), {
    status: r.ready ? 200 : 503,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
  });
}

export function livenessResponse(): Response {
  return new Response(JSON.stringify({ status: "ok" }), { status: 200, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } });
}
