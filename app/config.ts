import { join, resolve } from "node:path";
import { z } from "zod";
import { DEFAULT_PLANS, parsePlans } from "../domain/billing/plans.ts";
import type { Config } from "../domain/core/config.ts";

import { tracingSettings } from "./tracing.ts";

export type { Config, WorkerConfig } from "../domain/core/config.ts";

/**
 * Every setting of the service, read once from the environment (docs/conventions.md lists them).
 * Everything is optional: with no environment the service runs on embedded backends.
 */
const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default("127.0.0.1"),
  PUBLIC_URL: z.url().optional(),
  DATA_DIR: z.string().default("./.data"),
  DATABASE_URL: z.string().optional(),
  /** PostgreSQL: longest run of one statement of the service's pool; 0: none. */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(5000),
  /** PostgreSQL: longest run of a full-text search statement; 0: only DB_STATEMENT_TIMEOUT_MS. */
  SEARCH_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(2000),
  /** PostgreSQL streaming replicas for reads, comma-separated (docs/scaling.md); unset: every read on DATABASE_URL. */
  DATABASE_READ_URL: z
    .string()
    .transform((v) => v.split(",").map((u) => u.trim()).filter(Boolean))
    .optional(),
  /** A replica further behind than this serves no reads; a writer's reads stay on the primary this long. */
  DB_READ_MAX_LAG_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
  REDIS_URL: z.string().optional(),
  /** The queues' own Redis; unset: REDIS_URL. Rate limits, idempotency and the credential cache stay on REDIS_URL. */
  QUEUE_REDIS_URL: z.string().optional(),
  REDIS_PREFIX: z.string().default("media"),
  WORKER_INLINE: z.enum(["true", "false"]).default("true"),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /** Slots of network-bound jobs (imports, webhook deliveries, purges, search sync), apart from WORKER_CONCURRENCY's. */
  WORKER_IO_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  WORKER_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(3),
  WORKER_BACKOFF_MS: z.coerce.number().int().min(0).default(2000),
  WORKER_LOCK_MS: z.coerce.number().int().min(1000).default(30_000),
  WORKER_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).default(30_000),
  WORKER_TOOL_TIMEOUT_MS: z.coerce.number().int().min(1000).default(120_000),
  WORKER_MAX_INPUT_BYTES: z.coerce.number().int().min(1).default(2 * 1024 ** 3),
  WORKER_MAX_PIXELS: z.coerce.number().int().min(1).default(200_000_000),
  /** Niceness of the child process set renditions are rendered in; 0: in the worker itself. */
  WORKER_NICE: z.coerce.number().int().min(0).max(19).default(10),
  WORKER_SCHED_IDLE: z.enum(["true", "false"]).default("true"),
  RENDER_MAX_DIMENSION: z.coerce.number().int().min(16).max(8192).default(4096),
  RENDER_MAX_PIXELS: z.coerce.number().int().min(1).default(100_000_000),
  RENDER_MAX_SOURCE_BYTES: z.coerce.number().int().min(1).default(32 * 1024 ** 2),
  RENDER_CACHE_BYTES: z.coerce.number().int().min(0).default(1024 ** 3),
  RENDER_URL_MAX_SECONDS: z.coerce.number().int().min(60).default(30 * 86400),
  S3_ENDPOINT: z.string().optional(),
  S3_REGION: z.string().default("us-east-1"),
  S3_BUCKET: z.string().default("media"),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_PUBLIC_ENDPOINT: z.string().optional(),
  S3_FORCE_PATH_STYLE: z.enum(["true", "false"]).default("true"),
  S3_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  STORAGE_PORT: z.coerce.number().int().min(0).max(65535).default(9000),
  UPLOAD_URL_EXPIRES_IN: z.coerce.number().int().min(60).max(604800).default(900),
  /** Most bytes an upload URL without a size (or a part URL) may carry and counts as unconfirmed. */
  UPLOAD_UNSIZED_MAX_BYTES: z.coerce.number().int().min(1).max(5 * 1024 ** 3).default(64 * 1024 ** 2),
  MEILISEARCH_URL: z.string().optional(),
  MEILISEARCH_KEY: z.string().optional(),
  SEARCH_EXACT_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  JWT_SECRET: z.string().min(16).optional(),
  INITIAL_ADMIN_KEY: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hexadecimal characters").optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(300),
  /** Searches and on-the-fly renders one organization may run at once, per process; how long more wait. */
  ORG_MAX_SEARCHES: z.coerce.number().int().min(1).default(3),
  ORG_MAX_RENDERS: z.coerce.number().int().min(1).default(2),
  ORG_CONCURRENCY_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  /**
   * Milliseconds of full-text search one organization may run per second, per process (0: no
   * budget), and the burst a quiet organization may spend at once.
   */
  ORG_SEARCH_MS_PER_SECOND: z.coerce.number().int().min(0).default(250),
  ORG_SEARCH_BURST_MS: z.coerce.number().int().min(1).default(2500),
  /** The same for uncached on-the-fly renders (the picture decoded and encoded): 0 turns it off. */
  ORG_RENDER_MS_PER_SECOND: z.coerce.number().int().min(0).default(500),
  ORG_RENDER_BURST_MS: z.coerce.number().int().min(1).default(5000),
  /** Requests per minute of one organization, all its credentials together; unset: 4 × RATE_LIMIT_PER_MINUTE. */
  ORG_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).optional(),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
  STRIPE_SECRET_KEY: z.string().optional(),
  STRIPE_WEBHOOK_SECRET: z.string().optional(),
  /** Another API base for the provider (stripe-mock, a local fake); unset: Stripe's own. */
  STRIPE_API_URL: z.url().optional(),
  /** JSON array of plan tiers (docs/billing.md); unset: free, pro, business. */
  PLANS: z.string().optional(),
  /** Origins allowed to call the API from a browser: comma-separated, or `*`; unset: none. */
  CORS_ORIGINS: z
    .string()
    .transform((v) => v.split(",").map((o) => o.trim()).filter(Boolean))
    .pipe(z.array(z.union([z.literal("*"), z.string().refine(isOrigin, "each entry must be an origin such as https://app.example.com (scheme and host, no path), or *")])))
    .optional(),
  WEBHOOK_ALLOW_PRIVATE: z.enum(["true", "false"]).default("false"),
  WEBHOOK_ALLOWED_HOSTS: z
    .string()
    .transform((v) => v.split(",").map((h) => h.trim().toLowerCase()).filter(Boolean))
    .optional(),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WEBHOOK_ATTEMPTS: z.coerce.number().int().min(1).max(30).default(13),
  WEBHOOK_BACKOFF_MS: z.coerce.number().int().min(0).default(60_000),
  /** Hosts /mcp answers to (DNS-rebinding protection); unset: PUBLIC_URL's host, and loopback names when HOST is loopback. */
  MCP_ALLOWED_HOSTS: z
    .string()
    .transform((v) => v.split(",").map((h) => h.trim().toLowerCase()).filter(Boolean))
    .optional(),
  IMPORT_ALLOW_PRIVATE: z.enum(["true", "false"]).default("false"),
  IMPORT_MAX_BYTES: z.coerce.number().int().min(1).default(1024 * 1024 * 1024),
  IMPORT_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(300_000),
  /** An import that receives fewer bytes than this in IMPORT_MIN_RATE_WINDOW_MS is stopped as too slow; 0: no floor. */
  IMPORT_MIN_RATE_BYTES: z.coerce.number().int().min(0).default(32 * 1024),
  IMPORT_MIN_RATE_WINDOW_MS: z.coerce.number().int().min(1000).max(3_600_000).default(30_000),
  IMPORT_MAX_REDIRECTS: z.coerce.number().int().min(0).max(20).default(5),
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(180),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  /** A second listener for /metrics, /healthz and /readyz, without credentials (docs/operations.md). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Bearer token for /metrics on the main port; unset: /metrics is not served there. */
  METRICS_TOKEN: z.string().min(16).optional(),
  READY_TIMEOUT_MS: z.coerce.number().int().min(50).default(2000),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(25_000),
});

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/**
 * The hosts /mcp answers to. Set: exactly those. Unset: PUBLIC_URL's host, plus the loopback
 * names when the server listens on loopback (where DNS rebinding is the threat); a server on a
 * public interface with no PUBLIC_URL cannot know its own name, so it checks nothing.
 */
function mcpAllowedHosts(configured: string[] | undefined, host: string, publicUrl: string | undefined): "*" | string[] {
  if (configured) return configured.includes("*") ? "*" : configured;
  const loopback = ["127.0.0.1", "::1", "localhost"].includes(host) || host.startsWith("127.");
  const hosts = [...(publicUrl ? [new URL(publicUrl).host.toLowerCase()] : []), ...(loopback ? LOOPBACK_NAMES : [])];
  return hosts.length > 0 ? hosts : "*";
}

function isOrigin(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === "http:" || u.protocol === "https:") && u.pathname === "/" && !u.search && !u.hash && !u.username && !value.endsWith("?");
  } catch {
    return false;
  }
}

/** Where the database is: DATABASE_URL, else the embedded one under DATA_DIR. Every entry point opens it so. */
export function databaseLocation(config: Pick<Config, "databaseUrl" | "dataDir">): { url?: string; dataDir: string } {
  return { ...(config.databaseUrl ? { url: config.databaseUrl } : {}), dataDir: join(config.dataDir, "db") };
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable means unset, as in most tools (`FOO= npm start`).
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  if (e.DATABASE_READ_URL?.length && !e.DATABASE_URL) {
    throw new Error("Invalid configuration:\n  DATABASE_READ_URL: needs DATABASE_URL (the embedded database has no replicas)");
  }
  if (e.QUEUE_REDIS_URL && !e.REDIS_URL) {
    throw new Error("Invalid configuration:\n  QUEUE_REDIS_URL: needs REDIS_URL (rate limits and idempotency live there)");
  }
  if (e.WORKER_INLINE === "false" && !e.REDIS_URL) {
    throw new Error("Invalid configuration:\n  WORKER_INLINE: false needs REDIS_URL (without Redis, jobs can only run inside the server)");
  }
  let plans = DEFAULT_PLANS;
  if (e.PLANS) {
    try {
      plans = parsePlans(e.PLANS);
    } catch (err) {
      throw new Error(`Invalid configuration:\n  ${(err as Error).message}`);
    }
  }
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl: e.PUBLIC_URL ?? null,
    dataDir: resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL || null,
    statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
    searchStatementTimeoutMs: e.SEARCH_STATEMENT_TIMEOUT_MS,
    databaseReadUrls: e.DATABASE_URL ? (e.DATABASE_READ_URL ?? []) : [],
    readMaxLagMs: e.DB_READ_MAX_LAG_MS,
    redisUrl: e.REDIS_URL || null,
    queueRedisUrl: e.QUEUE_REDIS_URL || e.REDIS_URL || null,
    redisPrefix: e.REDIS_PREFIX,
    worker: {
      inline: e.WORKER_INLINE === "true",
      concurrency: e.WORKER_CONCURRENCY,
      ioConcurrency: e.WORKER_IO_CONCURRENCY,
      attempts: e.WORKER_ATTEMPTS,
      backoffMs: e.WORKER_BACKOFF_MS,
      lockMs: e.WORKER_LOCK_MS,
      stalledIntervalMs: e.WORKER_STALLED_INTERVAL_MS,
      toolTimeoutMs: e.WORKER_TOOL_TIMEOUT_MS,
      maxInputBytes: e.WORKER_MAX_INPUT_BYTES,
      maxPixels: e.WORKER_MAX_PIXELS,
      nice: e.WORKER_NICE,
      schedIdle: e.WORKER_SCHED_IDLE === "true",
    },
    render: {
      maxDimension: e.RENDER_MAX_DIMENSION,
      maxPixels: e.RENDER_MAX_PIXELS,
      maxSourceBytes: e.RENDER_MAX_SOURCE_BYTES,
      cacheBytesPerOrg: e.RENDER_CACHE_BYTES,
      maxUrlSeconds: e.RENDER_URL_MAX_SECONDS,
    },
    s3: {
      endpoint: e.S3_ENDPOINT || null,
      region: e.S3_REGION,
      bucket: e.S3_BUCKET,
      accessKeyId: e.S3_ACCESS_KEY_ID ?? null,
      secretAccessKey: e.S3_SECRET_ACCESS_KEY ?? null,
      publicEndpoint: e.S3_PUBLIC_ENDPOINT ?? null,
      forcePathStyle: e.S3_FORCE_PATH_STYLE === "true",
      timeoutMs: e.S3_TIMEOUT_MS,
      embeddedPort: e.STORAGE_PORT,
    },
    uploadUrlExpiresIn: e.UPLOAD_URL_EXPIRES_IN,
    uploadUnsizedMaxBytes: e.UPLOAD_UNSIZED_MAX_BYTES,
    meilisearch: e.MEILISEARCH_URL ? { url: e.MEILISEARCH_URL, key: e.MEILISEARCH_KEY ?? null } : null,
    searchExactLimit: e.SEARCH_EXACT_LIMIT,
    jwtSecret: e.JWT_SECRET ?? null,
    initialAdminKey: e.INITIAL_ADMIN_KEY ?? null,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    orgConcurrency: {
      searches: e.ORG_MAX_SEARCHES,
      renders: e.ORG_MAX_RENDERS,
      waitMs: e.ORG_CONCURRENCY_WAIT_MS,
      searchBudget: e.ORG_SEARCH_MS_PER_SECOND > 0 ? { msPerSecond: e.ORG_SEARCH_MS_PER_SECOND, burstMs: e.ORG_SEARCH_BURST_MS } : null,
      renderBudget: e.ORG_RENDER_MS_PER_SECOND > 0 ? { msPerSecond: e.ORG_RENDER_MS_PER_SECOND, burstMs: e.ORG_RENDER_BURST_MS } : null,
    },
    orgRateLimitPerMinute: e.ORG_RATE_LIMIT_PER_MINUTE ?? 4 * e.RATE_LIMIT_PER_MINUTE,
    maxBodyBytes: e.MAX_BODY_BYTES,
    stripe: { secretKey: e.STRIPE_SECRET_KEY ?? null, webhookSecret: e.STRIPE_WEBHOOK_SECRET ?? null, apiUrl: e.STRIPE_API_URL ?? null },
    plans,
    logLevel: e.LOG_LEVEL,
    corsOrigins: e.CORS_ORIGINS?.includes("*") ? "*" : (e.CORS_ORIGINS ?? []).map((o) => new URL(o).origin),
    webhooks: {
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE === "true",
      allowedHosts: e.WEBHOOK_ALLOWED_HOSTS ?? null,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      attempts: e.WEBHOOK_ATTEMPTS,
      backoffMs: e.WEBHOOK_BACKOFF_MS,
    },
    mcpAllowedHosts: mcpAllowedHosts(e.MCP_ALLOWED_HOSTS, e.HOST, e.PUBLIC_URL),
    imports: {
      allowPrivate: e.IMPORT_ALLOW_PRIVATE === "true",
      maxBytes: e.IMPORT_MAX_BYTES,
      timeoutMs: e.IMPORT_TIMEOUT_MS,
      minRate: { bytes: e.IMPORT_MIN_RATE_BYTES, windowMs: e.IMPORT_MIN_RATE_WINDOW_MS },
      maxRedirects: e.IMPORT_MAX_REDIRECTS,
    },
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    validateOutputs: false,
    ops: {
      metricsPort: e.METRICS_PORT ?? null,
      metricsToken: e.METRICS_TOKEN ?? null,
      readyTimeoutMs: e.READY_TIMEOUT_MS,
      shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
      tracing: tracingSettings(present, "media-storage"),
    },
  };
}
