import { expect } from "bun:test";
import { type Config, loadConfig } from "../../app/config.ts";
import { bootstrap } from "../../domain/access/identity.ts";
import { newOrg, startServer, type TestOrg, type TestServer, type TestServerOptions } from "./server.ts";

/**
 * Small pieces the promise audit's checks (test/claims/) share. A check runs against the one
 * embedded server doc-claims.test.ts starts; these give it an organization, a server with other
 * settings, or the defaults the configuration falls back to.
 */

/** Where each documented variable's value lands in the configuration. */
const settings: Record<string, (c: Config) => unknown> = {
  PORT: (c) => c.port,
  HOST: (c) => c.host,
  PUBLIC_URL: (c) => c.publicUrl,
  DATABASE_URL: (c) => c.databaseUrl,
  DB_STATEMENT_TIMEOUT_MS: (c) => c.statementTimeoutMs,
  SEARCH_STATEMENT_TIMEOUT_MS: (c) => c.searchStatementTimeoutMs,
  REDIS_URL: (c) => c.redisUrl,
  QUEUE_REDIS_URL: (c) => c.queueRedisUrl,
  DATABASE_READ_URL: (c) => c.databaseReadUrls,
  DB_READ_MAX_LAG_MS: (c) => c.readMaxLagMs,
  REDIS_PREFIX: (c) => c.redisPrefix,
  WORKER_INLINE: (c) => c.worker.inline,
  WORKER_CONCURRENCY: (c) => c.worker.concurrency,
  WORKER_IO_CONCURRENCY: (c) => c.worker.ioConcurrency,
  WORKER_ATTEMPTS: (c) => c.worker.attempts,
  WORKER_BACKOFF_MS: (c) => c.worker.backoffMs,
  WORKER_LOCK_MS: (c) => c.worker.lockMs,
  WORKER_STALLED_INTERVAL_MS: (c) => c.worker.stalledIntervalMs,
  WORKER_TOOL_TIMEOUT_MS: (c) => c.worker.toolTimeoutMs,
  WORKER_MAX_INPUT_BYTES: (c) => c.worker.maxInputBytes,
  WORKER_MAX_PIXELS: (c) => c.worker.maxPixels,
  WORKER_NICE: (c) => c.worker.nice,
  WORKER_SCHED_IDLE: (c) => c.worker.schedIdle,
  RENDER_MAX_DIMENSION: (c) => c.render.maxDimension,
  RENDER_MAX_PIXELS: (c) => c.render.maxPixels,
  RENDER_MAX_SOURCE_BYTES: (c) => c.render.maxSourceBytes,
  RENDER_CACHE_BYTES: (c) => c.render.cacheBytesPerOrg,
  RENDER_URL_MAX_SECONDS: (c) => c.render.maxUrlSeconds,
  S3_ENDPOINT: (c) => c.s3.endpoint,
  S3_REGION: (c) => c.s3.region,
  S3_BUCKET: (c) => c.s3.bucket,
  S3_FORCE_PATH_STYLE: (c) => c.s3.forcePathStyle,
  S3_TIMEOUT_MS: (c) => c.s3.timeoutMs,
  S3_PUBLIC_ENDPOINT: (c) => c.s3.publicEndpoint,
  STORAGE_PORT: (c) => c.s3.embeddedPort,
  UPLOAD_URL_EXPIRES_IN: (c) => c.uploadUrlExpiresIn,
  UPLOAD_UNSIZED_MAX_BYTES: (c) => c.uploadUnsizedMaxBytes,
  MEILISEARCH_URL: (c) => c.meilisearch,
  SEARCH_EXACT_LIMIT: (c) => c.searchExactLimit,
  JWT_SECRET: (c) => c.jwtSecret,
  INITIAL_ADMIN_KEY: (c) => c.initialAdminKey,
  RATE_LIMIT_PER_MINUTE: (c) => c.rateLimitPerMinute,
  ORG_MAX_SEARCHES: (c) => c.orgConcurrency.searches,
  ORG_MAX_RENDERS: (c) => c.orgConcurrency.renders,
  ORG_CONCURRENCY_WAIT_MS: (c) => c.orgConcurrency.waitMs,
  ORG_SEARCH_MS_PER_SECOND: (c) => c.orgConcurrency.searchBudget?.msPerSecond ?? 0,
  ORG_SEARCH_BURST_MS: (c) => c.orgConcurrency.searchBudget?.burstMs,
  ORG_RENDER_MS_PER_SECOND: (c) => c.orgConcurrency.renderBudget?.msPerSecond ?? 0,
  ORG_RENDER_BURST_MS: (c) => c.orgConcurrency.renderBudget?.burstMs,
  ORG_RATE_LIMIT_PER_MINUTE: (c) => c.orgRateLimitPerMinute,
  MAX_BODY_BYTES: (c) => c.maxBodyBytes,
  STRIPE_SECRET_KEY: (c) => c.stripe.secretKey,
  STRIPE_API_URL: (c) => c.stripe.apiUrl,
  CORS_ORIGINS: (c) => c.corsOrigins,
  WEBHOOK_TIMEOUT_MS: (c) => c.webhooks.timeoutMs,
  WEBHOOK_ATTEMPTS: (c) => c.webhooks.attempts,
  WEBHOOK_BACKOFF_MS: (c) => c.webhooks.backoffMs,
  WEBHOOK_ALLOW_PRIVATE: (c) => c.webhooks.allowPrivate,
  WEBHOOK_ALLOWED_HOSTS: (c) => c.webhooks.allowedHosts,
  MCP_ALLOWED_HOSTS: (c) => c.mcpAllowedHosts,
  IMPORT_ALLOW_PRIVATE: (c) => c.imports.allowPrivate,
  IMPORT_MAX_BYTES: (c) => c.imports.maxBytes,
  IMPORT_TIMEOUT_MS: (c) => c.imports.timeoutMs,
  IMPORT_MIN_RATE_BYTES: (c) => c.imports.minRate.bytes,
  IMPORT_MIN_RATE_WINDOW_MS: (c) => c.imports.minRate.windowMs,
  IMPORT_MAX_REDIRECTS: (c) => c.imports.maxRedirects,
  AUDIT_RETENTION_DAYS: (c) => c.auditRetentionDays,
  LOG_LEVEL: (c) => c.logLevel,
  METRICS_PORT: (c) => c.ops.metricsPort,
  METRICS_TOKEN: (c) => c.ops.metricsToken,
  READY_TIMEOUT_MS: (c) => c.ops.readyTimeoutMs,
  SHUTDOWN_TIMEOUT_MS: (c) => c.ops.shutdownTimeoutMs,
};

/** A check that these variables, left unset (with `env` set beside them), give these values. */
export function defaults(expected: Record<string, unknown>, env: Record<string, string> = {}): () => Promise<void> {
  return async () => {
    const config = loadConfig(env);
    const actual = Object.fromEntries(
      Object.keys(expected).map((name) => {
        const read = settings[name];
        if (!read) throw new Error(`no setting named ${name} is known to test/support/claim-checks.ts`);
        return [name, read(config)];
      }),
    );
    expect(actual).toEqual(expected);
  };
}

/** A check that a variable's value outside what the page allows stops the start with its name. */
export function refused(name: string, ...values: string[]): () => Promise<void> {
  return async () => {
    for (const value of values) expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(name);
  };
}

export const KiB = 1024;
export const MiB = 1024 ** 2;
export const GiB = 1024 ** 3;
export const DAY_MS = 86_400_000;

/** Runs `fn` against a server of its own (embedded backends), stopped afterwards. */
export async function withServer<T>(env: Record<string, string>, fn: (server: TestServer) => Promise<T>, opts: Omit<TestServerOptions, "env" | "embedded"> = {}): Promise<T> {
  const server = await startServer({ ...opts, embedded: true, env });
  try {
    return await fn(server);
  } finally {
    await server.stop();
  }
}

/** A new organization on the shared server, with an admin key (the usual start of a check). */
export function org(server: TestServer): Promise<TestOrg> {
  return newOrg(server, "Claims");
}

/** The bootstrap key a first start makes (on a database of its own): its lifetime and scopes. */
export async function bootstrapKey(): Promise<{ lifetimeMs: number; scopes: string[]; name: string }> {
  return withServer({}, async (fresh) => {
    const made = await bootstrap(fresh.services.deps, null);
    if (!made) throw new Error("a fresh database already had an organization");
    const keys = await fresh.api.withToken(made.secret).get("/api/api-keys");
    const key = keys.body.data[0];
    return { lifetimeMs: Date.parse(key.expiresAt) - Date.parse(key.createdAt), scopes: key.scopes, name: key.name };
  });
}

/** The OpenAPI document the shared server publishes. */
export async function openapi(server: TestServer): Promise<any> {
  return (await fetch(`${server.url}/api/openapi.json`)).json();
}

/** The JSON schema of one field of an operation's JSON body (`"POST /api/tags"`, `"name"`). */
export function bodyField(doc: any, operation: string, field: string): any {
  const [method, path] = operation.split(" ");
  const schema = doc.paths[path!]?.[method!.toLowerCase()]?.requestBody?.content?.["application/json"]?.schema;
  if (!schema?.properties?.[field]) throw new Error(`${operation} has no body field ${field}`);
  return schema.properties[field];
}

/** The JSON schema of one query or path parameter of an operation. */
export function parameter(doc: any, operation: string, name: string): any {
  const [method, path] = operation.split(" ");
  const p = parameters(doc, operation).find((x: { name: string }) => x.name === name);
  if (!p) throw new Error(`${operation} has no parameter ${name}`);
  return p.schema;
}

/** An operation's parameters, shared ones (`$ref`) resolved. */
export function parameters(doc: any, operation: string): any[] {
  const [method, path] = operation.split(" ");
  return (doc.paths[path!]?.[method!.toLowerCase()]?.parameters ?? []).map((p: { $ref?: string }) => (p.$ref ? doc.components.parameters[p.$ref.split("/").pop()!] : p));
}

/**
 * How long unconfirmed reservations are held: an upload URL's lifetime plus an hour, and a
 * multipart upload 24 hours from the last part presigned (read from the reservation rows).
 */
export async function reservationLifetimes(server: TestServer): Promise<void> {
  const { sql } = await import("drizzle-orm");
  const { rowsOf } = await import("../../db/client.ts");
  const o = await org(server);
  const bucket = (await o.admin.post("/api/buckets", { name: `held-${crypto.randomUUID().slice(0, 8)}` })).body;
  const heldFor = async (key: string) => {
    const [row] = rowsOf<{ ms: number }>(
      await server.services.deps.db.execute(sql`select extract(epoch from expires_at - now()) * 1000 as ms from upload_reservations where bucket_id = ${bucket.id} and key = ${key}`),
    );
    return Number(row!.ms);
  };
  const near = (ms: number, want: number) => expect(Math.abs(ms - want)).toBeLessThan(60_000);
  await o.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "single", size: 10 });
  near(await heldFor("single"), server.config.uploadUrlExpiresIn * 1000 + 3_600_000);
  const m = (await o.admin.post("/api/presign/create-multipart", { bucketId: bucket.id, key: "parts", size: 10 })).body;
  near(await heldFor("parts"), 24 * 3_600_000);
  await server.services.deps.db.execute(sql`update upload_reservations set expires_at = now() + interval '1 hour' where bucket_id = ${bucket.id} and key = 'parts'`);
  await o.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key: "parts", uploadId: m.uploadId, partNumber: 1 });
  near(await heldFor("parts"), 24 * 3_600_000);
}
