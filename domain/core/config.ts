import type { Plan } from "../billing/plans.ts";

/**
 * Every setting of the service, as domain code and adapters read it. app/config.ts builds it
 * once from the environment; the shape lives here so that domain code never imports app/.
 */
export interface Config {
  port: number;
  host: string;
  /** Address clients use to reach this server (for logs and links). */
  publicUrl: string | null;
  dataDir: string;
  databaseUrl: string | null;
  /** PostgreSQL statement_timeout of the service's pool, in ms; 0: none (PGlite has no timers). */
  statementTimeoutMs: number;
  /** The tighter statement_timeout of a full-text search, in ms; 0: only the pool's. */
  searchStatementTimeoutMs: number;
  /** PostgreSQL streaming replicas that lists, gets, searches and usage may read from; empty: none. */
  databaseReadUrls: string[];
  /** How far behind the primary a replica may be and still serve reads; also how long a writer's reads stay on the primary. */
  readMaxLagMs: number;
  redisUrl: string | null;
  /** The Redis of the BullMQ queues and their fairness counters; REDIS_URL unless QUEUE_REDIS_URL is set. */
  queueRedisUrl: string | null;
  /** Namespace for every Redis key and queue, so several deployments can share one Redis. */
  redisPrefix: string;
  worker: WorkerConfig;
  render: RenderConfig;
  s3: {
    /** null: start the embedded storage node. */
    endpoint: string | null;
    region: string;
    bucket: string;
    accessKeyId: string | null;
    secretAccessKey: string | null;
    publicEndpoint: string | null;
    forcePathStyle: boolean;
    /** Longest wait for storage to connect or send the next byte; then the request fails (503). */
    timeoutMs: number;
    embeddedPort: number;
  };
  uploadUrlExpiresIn: number;
  /**
   * The most bytes an upload URL signed without a size (a single PUT, or a multipart part)
   * may carry: what it counts against the organization's unconfirmed bytes, and the maximum
   * the embedded node's URL signs.
   */
  uploadUnsizedMaxBytes: number;
  meilisearch: { url: string; key: string | null } | null;
  /** Totals and facets are exact up to this many matches; above, the total is a lower bound. */
  searchExactLimit: number;
  jwtSecret: string | null;
  initialAdminKey: string | null;
  rateLimitPerMinute: number;
  /** Expensive work one organization may run at once in one process, and how long more waits for a slot. */
  orgConcurrency: { searches: number; renders: number; waitMs: number; searchBudget: TimeBudget | null; renderBudget: TimeBudget | null };
  /** Requests per minute of one organization, all its credentials together. */
  orgRateLimitPerMinute: number;
  maxBodyBytes: number;
  stripe: { secretKey: string | null; webhookSecret: string | null; apiUrl: string | null };
  /** Plan tiers; the first is the free tier every new organization starts on. */
  plans: Plan[];
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** Browser origins allowed to call /api and /mcp; `"*"` for any; empty: no cross-origin access. */
  corsOrigins: "*" | string[];
  webhooks: WebhookConfig;
  /**
   * Host names (with an optional port) that /mcp answers to: a request naming another in `Host`
   * or `Origin` is refused, so a web page cannot reach a local server through DNS rebinding.
   * "*": any host (a server behind a proxy that checks hosts itself).
   */
  mcpAllowedHosts: "*" | string[];
  imports: ImportConfig;
  /** Audit log entries older than this many days are deleted. */
  auditRetentionDays: number;
  /** Check every tool result against its output schema (tests turn this on). */
  validateOutputs: boolean;
  ops: OpsConfig;
}

/** Metrics, probes, traces and shutdown (docs/operations.md). */
export interface OpsConfig {
  /** Port of the credential-free listener for /metrics, /healthz and /readyz; null: none. */
  metricsPort: number | null;
  /** /metrics on the main port with this bearer token; null: not served there. */
  metricsToken: string | null;
  /** Longest wait for each dependency in /readyz. */
  readyTimeoutMs: number;
  /** SIGTERM: in-flight requests and jobs get this long to finish before the process exits anyway. */
  shutdownTimeoutMs: number;
  /** OpenTelemetry export, from the standard OTEL_* variables; null: tracing off. */
  tracing: TracingSettings | null;
}

export interface TracingSettings {
  /** Full URL of the traces endpoint (…/v1/traces). */
  url: string;
  protocol: "http/protobuf" | "http/json";
  headers: Record<string, string>;
  serviceName: string;
  /** 0..1: share of new traces kept (traces continued from a caller follow the caller's decision). */
  sampleRatio: number;
}

/** Background jobs (docs/worker.md). */
export interface WorkerConfig {
  /** With REDIS_URL: also run the BullMQ worker inside the server process. Without Redis jobs always run in-process. */
  inline: boolean;
  /** Jobs of the cpu class (thumbnails, renditions) one process runs at once. */
  concurrency: number;
  /** Jobs of the io class (imports, webhook deliveries, purges, search sync) one process runs at once, besides. */
  ioConcurrency: number;
  /** Runs of a failing job before it is failed for good, and the first retry delay (doubling after). */
  attempts: number;
  backoffMs: number;
  /** A job whose worker stopped renewing its lock for this long (a killed process) runs again. */
  lockMs: number;
  /** How often BullMQ looks for such jobs. */
  stalledIntervalMs: number;
  /** Decoding one video, audio or PDF file is stopped after this long. */
  toolTimeoutMs: number;
  /** Larger objects get no derivative (state unsupported): they would be copied to a temporary file first. */
  maxInputBytes: number;
  /** Images with more pixels are refused before decoding (decompression bombs). */
  maxPixels: number;
  /** Set renditions are rendered in a child process at this niceness (0: in-process). */
  nice: number;
  /** ...and in Linux's idle scheduling class (SCHED_IDLE), when `nice` is above 0. */
  schedIdle: boolean;
}

/** Fetching a URL into a bucket (media_import). */
export interface ImportConfig {
  /** Let URLs reach loopback, private, link-local or unique-local addresses (development and tests). */
  allowPrivate: boolean;
  /** Largest file fetched, in bytes. */
  maxBytes: number;
  /** Longest a whole fetch may take. */
  timeoutMs: number;
  /**
   * The slowest a fetch may be: fewer than `bytes` of the body in any `windowMs` (waiting for the
   * answer included) stops it, so a server that trickles frees its slot long before `timeoutMs`.
   * `bytes` 0: no floor.
   */
  minRate: { bytes: number; windowMs: number };
  /** Redirects followed before giving up. */
  maxRedirects: number;
}

/** Outbound webhooks (docs/events.md). */
export interface WebhookConfig {
  /** Let endpoints be on loopback, private, link-local or unique-local addresses (development). */
  allowPrivate: boolean;
  /** When set, the only hosts endpoints may name (checked before any DNS lookup). */
  allowedHosts: string[] | null;
  /** One delivery attempt's deadline: connect, send, and the answer's status. */
  timeoutMs: number;
  /** Attempts per delivery, and the delay before the second (doubling after): 13 from one minute spans about three days. */
  attempts: number;
  backoffMs: number;
}

/** On-the-fly renders (docs/worker.md, "Renders"). */
export interface RenderConfig {
  /** Largest width or height a render may ask for. */
  maxDimension: number;
  /** Pictures with more pixels are not decoded for a render. */
  maxPixels: number;
  /** Images larger than this are not rendered on the fly (they are read into memory). */
  maxSourceBytes: number;
  /** Bytes of cached renders an organization may keep; the oldest go first. */
  cacheBytesPerOrg: number;
  /** Longest lifetime of a signed render URL, in seconds. */
  maxUrlSeconds: number;
}

/**
 * Milliseconds of one kind of expensive work an organization may spend per second of real time,
 * with a burst allowance (domain/guards/org-concurrency.ts).
 */
export interface TimeBudget {
  /** Refill rate: milliseconds of work per second of real time (1000 = one full core). */
  msPerSecond: number;
  /** Bucket size: how much work a quiet organization may spend at once before the rate binds. */
  burstMs: number;
}
