import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import postgres from "postgres";
import { type Config, loadConfig } from "../../app/config.ts";
import { createServices, type Services } from "../../app/services.ts";
import { createLogger } from "../../app/log.ts";
import type { Elysia } from "elysia";
import type { Clock } from "../../domain/core/clock.ts";
import type { Deps } from "../../domain/core/deps.ts";
import type { Logger } from "../../domain/ports/log.ts";
import type { Processors } from "../../domain/ports/queue.ts";
import { createHttpApp } from "../../app/http.ts";
import { Api } from "./http.ts";
import { seedDataDir } from "./pglite-template.ts";
import { TEST_PICTURE_PRIORITY } from "./processes.ts";
import { JWT_SECRET, testEnv } from "./env.ts";

export { seedDataDir };

export interface TestServer {
  url: string;
  services: Services;
  config: Config;
  /** An unauthenticated client; use `.withToken()`. */
  api: Api;
  stop(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Force the embedded database even when PostgreSQL is configured for the run. */
  embedded?: boolean;
  /** Reuse a data directory (restart tests). */
  dataDir?: string;
  /** Replace the job table (to hold a job back, or make it crash). */
  processors?: (deps: Deps) => Processors;
  /** Replace the logger (tests that check what is logged). */
  log?: Logger;
  /** Non-tool routes, as createApp takes them. */
  extraRoutes?: (app: Elysia) => void;
  /**
   * On the PostgreSQL pass, a database and a Redis prefix of this server's own (made here,
   * migrated by the server, dropped at stop) instead of the run's shared ones. For files that
   * move the clock days ahead and run the maintenance pass: on the shared database that pass
   * sweeps and purges every earlier file's rows, which took over three minutes in CI.
   */
  ownDatabase?: boolean;
}

/**
 * A real server on a real port, on the run's backends: PostgreSQL (a database made for
 * this run) and Redis when test/run.ts provides them, else PGlite in a temporary directory.
 */
export async function startServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "media-test-"));
  const useServices = !opts.embedded && testEnv.mode === "services";
  if (!useServices) await seedDataDir(dataDir);
  const own = useServices && opts.ownDatabase ? await ownDatabase() : null;
  const databaseUrl = own?.url ?? testEnv.databaseUrl;
  const redisPrefix = own ? `${testEnv.redisPrefix}-${own.name}` : testEnv.redisPrefix;
  const config = loadConfig({
    DATA_DIR: dataDir,
    JWT_SECRET,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "error",
    STORAGE_PORT: "0",
    ...(useServices && databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...(useServices && testEnv.redisUrl ? { REDIS_URL: testEnv.redisUrl, REDIS_PREFIX: redisPrefix } : {}),
    // Every test server runs with the guards; a high limit keeps suites from tripping it.
    // Rate limit tests pass their own.
    RATE_LIMIT_PER_MINUTE: "100000",
    // Webhook receivers in tests listen on loopback; nothing else may ever be reached (the
    // fuzzer registers endpoints at made-up hosts). Refusal tests override both.
    WEBHOOK_ALLOW_PRIVATE: "true",
    WEBHOOK_ALLOWED_HOSTS: "127.0.0.1,localhost",
    // The per-organization budgets of search and render time count wall time, which a loaded
    // machine stretches: back-to-back searches were refused with 429 at load 17. The tests of
    // the budgets turn them on.
    ORG_SEARCH_MS_PER_SECOND: "0",
    ORG_RENDER_MS_PER_SECOND: "0",
    ...TEST_PICTURE_PRIORITY,
    ...opts.env,
  });
  config.validateOutputs = true;
  const services = await createServices(config, { clock: opts.clock, log: opts.log ?? createLogger(config.logLevel), processors: opts.processors });
  const app = createHttpApp(services, { extraRoutes: opts.extraRoutes }).listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${app.server!.port}`;
  return {
    url,
    services,
    config,
    api: new Api(url, null),
    stop: async () => {
      await app.stop(true);
      await services.close();
      await own?.drop();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A database named after the run's (test/run.ts drops any left by a killed file). Its Redis
 * prefix starts with the run's, whose keys test/run.ts deletes when the pass ends.
 */
async function ownDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const shared = new URL(testEnv.databaseUrl!);
  const name = `${shared.pathname.slice(1)}_own_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(testEnv.databaseUrl!, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(shared);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

export async function signJwt(
  claims: { sub: string; org_id: string; email?: string; org_name?: string },
  opts: { expiresIn?: string | number; secret?: string } = {},
): Promise<string> {
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt()
    .setExpirationTime(opts.expiresIn ?? "1h")
    .sign(new TextEncoder().encode(opts.secret ?? JWT_SECRET));
}

export interface TestOrg {
  orgId: string;
  userId: string;
  jwt: string;
  /** Client acting with the org's JWT (every scope). */
  owner: Api;
  /** Client acting with a fresh admin API key of the org. */
  admin: Api;
  adminKey: { id: string; secret: string };
  /** Creates a key with these scopes (and bucket) and returns a client using it. */
  keyClient(scopes: string[], extra?: { bucketId?: string; expiresInDays?: number }): Promise<Api & { keyId: string; secret: string }>;
}

/** A new organization, provisioned through a JWT like a dashboard user, with an admin key. */
export async function newOrg(server: TestServer, name = "Test org"): Promise<TestOrg> {
  const orgId = crypto.randomUUID();
  const userId = crypto.randomUUID();
  const jwt = await signJwt({ sub: userId, org_id: orgId, email: `${userId}@example.test`, org_name: name });
  const owner = server.api.withToken(jwt);
  const keyClient = async (scopes: string[], extra: { bucketId?: string; expiresInDays?: number } = {}) => {
    const res = await owner.post("/api/api-keys", { name: `key ${scopes.join("+")}`, scopes, ...extra });
    if (res.status !== 201) throw new Error(`creating a key failed: ${res.status} ${JSON.stringify(res.body)}`);
    return Object.assign(server.api.withToken(res.body.secret), { keyId: res.body.id as string, secret: res.body.secret as string });
  };
  const admin = await keyClient(["admin"]);
  return { orgId, userId, jwt, owner, admin, adminKey: { id: admin.keyId, secret: admin.secret }, keyClient };
}

/**
 * The environment of an `npm run worker` process that works for `server`: the same database,
 * Redis (under `redisPrefix`) and storage node, with the node's own credential.
 */
export function workerEnvFor(server: TestServer, redisPrefix: string): Record<string, string> {
  const credentials = JSON.parse(readFileSync(join(server.config.dataDir, "storage-credentials.json"), "utf8"));
  return {
    DATABASE_URL: testEnv.databaseUrl!,
    REDIS_URL: testEnv.redisUrl!,
    REDIS_PREFIX: redisPrefix,
    S3_ENDPOINT: server.services.backends.storage.replace(/^embedded at /, ""),
    S3_BUCKET: server.config.s3.bucket,
    S3_ACCESS_KEY_ID: credentials.accessKeyId,
    S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    DATA_DIR: server.config.dataDir,
    // Workers render as the server does.
    ...TEST_PICTURE_PRIORITY,
  };
}
