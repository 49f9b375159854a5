import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../app/config.ts";
import { DEFAULT_OLDER_THAN_MS } from "../../domain/reconcile/reconcile.ts";
import type { PageClaims } from "./claim.ts";
import { DAY_MS, defaults, org } from "../support/claim-checks.ts";
import { newBucket } from "../support/objects.ts";
import { upload } from "../support/upload.ts";

const READINESS = "test/hardening/readiness.test.ts";
const SHUTDOWN = "test/hardening/shutdown.test.ts";
const STARTUP = "test/hardening/startup-probes.test.ts";
const METRICS = "test/integration/metrics.test.ts";
const PACKAGING = "test/hardening/packaging.test.ts";

/** The documents of packaging/kubernetes/<file>. */
type Manifest = { kind: string; metadata: { name: string }; spec: any };
function manifests(file: string): Manifest[] {
  const parsed = Bun.YAML.parse(readFileSync(join(import.meta.dir, "../../packaging/kubernetes", file), "utf8")) as Manifest | Manifest[];
  return Array.isArray(parsed) ? parsed : [parsed];
}
const IMAGE = "a measurement: packaging/build-image.sh run with podman (runc) on the development machine, 2026-11-29; test/e2e/container.test.ts builds and runs the image when TEST_CONTAINER=1";
const MEASURED = "a measurement of this release's lockfile (npm ci --omit=dev into a temporary directory, then du -sh and npm ls --parseable, before and after the steps build-image.sh takes); build-image.sh prints the figures of each build";

export default {
  page: "docs/operations.md",
  claims: [
    {
      says: '| /healthz | always 200 {"status":"ok"} while the process answers |',
      check: async (server) => {
        const res = await fetch(`${server.url}/healthz`);
        expect([res.status, await res.json()]).toEqual([200, { status: "ok" }]);
      },
    },
    {
      says: '| /readyz | 200 {"status":"ready","checks":{…}}, or 503 with "failed":[…] naming what is down |',
      check: async (server) => {
        const res = await fetch(`${server.url}/readyz`);
        const body = (await res.json()) as { status: string; checks: Record<string, { ok: boolean }> };
        expect([res.status, body.status]).toEqual([200, "ready"]);
        expect(Object.keys(body.checks).sort()).toEqual(["postgres", "storage"]);
      },
    },
    { says: '| /readyz | 200 {"status":"ready","checks":{…}}, or 503 with "failed":[…] naming what is down |', by: { file: READINESS, test: "PostgreSQL stopped: 503 naming postgres, on both; ready again once it is back" } },
    { says: "Each has READY_TIMEOUT_MS (2 s) to answer, so a hung dependency costs the probe that long and no more.", by: { file: READINESS, test: "storage stopped, then hung: 503 naming storage within the probe's deadline" } },
    { says: "Each has READY_TIMEOUT_MS (2 s) to answer,", check: defaults({ READY_TIMEOUT_MS: 2_000 }) },
    {
      says: '| /readyz of a server with Redis down | 200 {"status":"ready","degraded":["redis"],…} | the API serves without Redis (below): it stays in rotation |',
      by: { file: STARTUP, test: "Redis down: an API server stays ready, its /readyz names redis as degraded" },
    },
    {
      says: "So a server's /readyz stays 200 and names Redis as degraded, and the log says so once per outage (readiness check failed; still ready, serving without it (fail-open)).",
      by: { file: STARTUP, test: "Redis down: an API server stays ready, its /readyz names redis as degraded, and the log says it serves fail-open" },
    },
    { says: "A worker cannot run jobs without Redis: its /readyz answers 503 naming redis.", by: { file: READINESS, test: "Redis killed: the worker answers 503 naming redis" } },
    {
      says: 'answers /healthz with 200 and /readyz with 503 {"status":"starting"} on PORT and METRICS_PORT (every other path: 503 unavailable), so that neither a liveness probe nor a supervisor takes the wait for a hang.',
      by: { file: STARTUP, test: "an instance waiting for another's migration logs it, answers /healthz and is not ready until it has migrated" },
    },
    { says: 'During a graceful shutdown /readyz answers 503 {"status":"stopping"} from the first moment.', by: { file: SHUTDOWN, test: "SIGTERM drains the request in flight and the job in hand, then exits 0" } },
    { says: "Prometheus text format, from prom-client.", by: { file: METRICS, test: "counts a known workload exactly" } },
    { says: "Authorization: Bearer <METRICS_TOKEN> (401 otherwise).", by: { file: METRICS, test: "is refused without the token on the main port, and served without one on METRICS_PORT" } },
    {
      says: "Without a token the main port has no /metrics at all (404).",
      check: async (server) => {
        expect(server.config.ops.metricsToken ?? null).toBeNull();
        expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
      },
    },
    { says: "| media_requests_total | counter | surface, tool, status | HTTP requests.", by: { file: METRICS, test: "counts a known workload exactly" } },
    { says: "surface: rest, mcp, or cli for MCP traffic relayed by the CLI's stdio bridge", by: { file: METRICS, test: "the CLI's real stdio bridge counts as surface cli" } },
    { says: "| media_rate_limited_total | counter | surface | 429 rate_limited answers |", by: { file: METRICS, test: "counts a known workload exactly" } },
    { says: "| media_idempotent_replays_total | counter | surface | answers replayed for a repeated Idempotency-Key |", by: { file: METRICS, test: "counts a known workload exactly" } },
    { says: "| media_jobs | gauge | state | jobs by state, read at scrape time:", by: { file: METRICS, test: "counts a known workload exactly" } },
    { says: "| media_jobs_unavailable | gauge | | 1 when this scrape could not read the job counts within 1 s", by: { file: "test/integration/metrics-redis-down.test.ts", test: "killed: every scrape answers, saying the queue's counts are unknown and keeping the outbox's" } },
    { says: "| media_jobs_unavailable | gauge | | 1 when this scrape could not read the job counts within 1 s", by: { file: "test/unit/metrics-job-counts.test.ts", test: "the deadline is the 1 s docs/operations.md names" } },
    { says: "(BullMQ keeps failed jobs 30 days;", by: { file: "test/integration/bullmq-worker.test.ts", test: "failed jobs are kept 30 days (at most 10,000), completed ones a day (at most 1,000)" } },
    { says: "and the pool's size max (PostgreSQL: 10 per process; embedded: 1)", by: { file: METRICS, test: "counts a known workload exactly" } },
    {
      says: "| OTEL_SERVICE_NAME | default media-storage;",
      check: async () => {
        const tracing = (env: Record<string, string>) => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", ...env }).ops.tracing;
        expect(tracing({})?.serviceName).toBe("media-storage");
        expect(tracing({ OTEL_SERVICE_NAME: "media-worker" })?.serviceName).toBe("media-worker");
      },
    },
    { says: "| bytesWithoutRow | bytes no row knows: uploads PUT but never confirmed, stray derivative files | deleted, once older than --older-than (24 h) |", by: { file: "test/integration/reconcile.test.ts", test: "fix deletes the stray bytes, makes the thumbnail again, corrects the counters, and says so" } },
    {
      says: "deleted, once older than --older-than (24 h) |",
      check: async () => {
        // npm run reconcile's flag defaults to the same constant the tool uses.
        expect(DEFAULT_OLDER_THAN_MS).toBe(DAY_MS);
      },
    },
    { says: "only after their row is soft-deleted (a purge runs 7 days later),", by: { file: "test/integration/media.test.ts", test: "the bytes stay for the retention period, then the purge job removes them" } },
    {
      says: "(a purge runs 7 days later)",
      check: async (server) => {
        const o = await org(server);
        const bucket = await newBucket(o);
        const obj = await upload(o.admin, bucket.id, "seven.txt", "days");
        expect((await o.admin.delete(`/api/media/${obj.id}`)).status).toBe(200);
        const row = (await o.admin.get(`/api/trash?bucketId=${bucket.id}`)).body.data.find((t: { id: string }) => t.id === obj.id);
        expect(Date.parse(row.restorableUntil) - Date.parse(row.deletedAt)).toBe(7 * DAY_MS);
      },
    },
    { says: "1. answer /readyz with 503 stopping at once, so load balancers stop sending;", by: { file: SHUTDOWN, test: "SIGTERM drains the request in flight and the job in hand, then exits 0" } },
    { says: "All of it within SHUTDOWN_TIMEOUT_MS (25 s). Past the deadline the process logs shutdown deadline passed and exits 1:", by: { file: SHUTDOWN, test: "a job that outlasts SHUTDOWN_TIMEOUT_MS: exit 1 at the deadline, and the job runs on the next start" } },
    { says: "All of it within SHUTDOWN_TIMEOUT_MS (25 s).", check: defaults({ SHUTDOWN_TIMEOUT_MS: 25_000 }) },
    { says: "a PING that gets no answer within 500 ms lets the queue's connections go at once.", by: { file: SHUTDOWN, test: "SIGTERM while Redis is unreachable" } },
    { says: "Each command that hands a job to the queue gives up after 2 s,", by: { file: SHUTDOWN, test: "the queue's add gives up on a Redis that accepts and never answers" } },
    { says: "the outbox's dispatch pass in hand hands over no further job once the shutdown has begun:", by: { file: "test/integration/outbox.test.ts", test: "a dispatcher told to stop hands over no further row" } },
    { says: "Jobs committed while Redis was away (an upload confirmed during the outage) stay in the outbox, and the next start,", by: { file: SHUTDOWN, test: "the next start dispatches the confirmed upload's job" } },
    { says: "The guards' connection closes with a QUIT under its 500 ms command deadline.", by: { file: "test/integration/guards-fail-open.test.ts", test: "a hung Redis: commands give up after 500 ms" } },
    { says: "All told, Redis can hold a shutdown for a few seconds, far inside SHUTDOWN_TIMEOUT_MS.", by: { file: SHUTDOWN, test: "Redis ${how}: the process exits 0 in seconds" } },
    {
      says: "the manifests allow 10 minutes (120 tries 5 s apart) before the pod is restarted.",
      check: async () => {
        for (const d of [...manifests("api.yaml"), ...manifests("worker.yaml")].filter((m) => m.kind === "Deployment")) {
          for (const c of d.spec.template.spec.containers) expect([c.startupProbe.periodSeconds, c.startupProbe.failureThreshold]).toEqual([5, 120]);
        }
      },
    },
    { says: "REDIS_PREFIX of its own (for example media-drill)", by: { file: "test/hardening/restore-drill.test.ts", test: "every Redis key and channel the service uses is under REDIS_PREFIX" } },
    {
      says: "packaging/kubernetes/ deploys the image: a media-api Deployment (two pods, a rolling update that keeps both serving) behind a media-api Service, a media-worker Deployment, a media-migrate Job, a PodDisruptionBudget for each Deployment (a node drain takes one pod at a time),",
      check: async () => {
        const [api, service, apiBudget] = manifests("api.yaml");
        expect([api!.kind, api!.metadata.name, api!.spec.replicas, api!.spec.strategy.rollingUpdate.maxUnavailable]).toEqual(["Deployment", "media-api", 2, 0]);
        expect([service!.kind, service!.metadata.name]).toEqual(["Service", "media-api"]);
        const [worker, workerBudget] = manifests("worker.yaml");
        expect([worker!.kind, worker!.metadata.name, worker!.spec.replicas]).toEqual(["Deployment", "media-worker", 2]);
        expect(manifests("migrate-job.yaml").map((m) => `${m.kind} ${m.metadata.name}`)).toEqual(["Job media-migrate"]);
        // One pod at a time: each budget keeps all but one of its Deployment's two pods.
        for (const budget of [apiBudget!, workerBudget!]) expect([budget.kind, budget.spec.minAvailable]).toEqual(["PodDisruptionBudget", 1]);
      },
    },
    { says: "packaging/kubernetes/ deploys the image:", by: { file: PACKAGING, test: "an API Deployment with its Service, a worker Deployment, a migration Job, a PodDisruptionBudget for each Deployment; no Secret" } },
    { says: "against the Kubernetes API's schema for its kind (the validators of the kubernetes-models package,", by: { file: PACKAGING, test: "every document is valid against its kind's Kubernetes schema" } },
    { says: "each probe names the METRICS_PORT listener and answers 200 on a server started with the ConfigMap's settings;", by: { file: PACKAGING, test: "every probe of every Deployment answers 200 on the port it names" } },
    {
      says: "Workers of this release run jobs as well, so what is queued there is run by whichever worker is up, old or new.",
      by: { file: "test/integration/bullmq-worker.test.ts", test: "a rolling upgrade strands nothing" },
    },
  ],
  notPromises: [
    { says: "| production dependencies (npm ci --omit=dev), as installed | 794 MB, 536 packages |", why: MEASURED },
    { says: "| of which @scalar/api-reference and what only it needs | 274 MB, 266 packages |", why: MEASURED },
    { says: "| of which TypeScript | 31 MB, 2 packages |", why: MEASURED },
    { says: "| what the image keeps: node_modules without Bun | 489 MB, 268 packages (node-av's FFmpeg libraries 167 MB, pdf.js 38 MB, the canvas pdf.js draws on 35 MB, PGlite 27 MB) |", why: MEASURED },
    { says: "| Bun | 103 MB |", why: MEASURED },
    { says: "| the service's own files | 5 MB |", why: MEASURED },
    { says: "| /app in all | about 630 MB |", why: MEASURED },
    { says: "| the Debian bookworm minimal base (debootstrap's minbase, its package cache and lists removed) | 131 MB |", why: IMAGE },
    { says: "| the image, as podman images reports it (built 2026-11-29 with build-image.sh) | 762 MB (848 MB before the base dropped debootstrap's package cache) |", why: IMAGE },
    { says: "keys in UTF-8 byte order) with its rows read through a database cursor in the same order", why: "how the merge walks both sides (S3's listing order); UTF-8 names an encoding, not a size" },
  ],
} satisfies PageClaims;
