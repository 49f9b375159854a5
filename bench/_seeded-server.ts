import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SignJWT } from "jose";
import { deleteRedisPrefix, load1, REDIS_URL, rssMiB, startTarget } from "./_load.ts";
import { seededDatabase } from "./_seed.ts";

const JWT_SECRET = "bench-secret-bench-secret";

/**
 * The server of the list and search scenarios: in its own process (so its RSS is its own) on
 * the reusable seeded database, with a dashboard JWT of the seeded organization. These measure
 * throughput, so the per-credential rate limit and the organization's search time budget are
 * lifted (the concurrency caps stay: a search over them waits for a slot, here up to wrk's own
 * 10 s timeout rather than the default second, past which a busy machine's searches were
 * refused with 429 and the run stopped on them). `stop` removes
 * what the run made besides the database, which stays for the next run.
 */
export async function seededServer(scenario: string, n: number, extraEnv: Record<string, string> = {}) {
  const seeded = await seededDatabase(n);
  const prefix = `mbench-${scenario}-${Date.now()}`;
  const dataDir = join(import.meta.dir, ".work", prefix);
  mkdirSync(dataDir, { recursive: true });
  const loadStart = load1();
  const app = await startTarget({
    mode: "app",
    env: { DATABASE_URL: seeded.url, REDIS_URL, REDIS_PREFIX: prefix, JWT_SECRET, LOG_LEVEL: "error", DATA_DIR: dataDir, STORAGE_PORT: "0", RATE_LIMIT_PER_MINUTE: "100000000", ORG_SEARCH_MS_PER_SECOND: "0", ORG_CONCURRENCY_WAIT_MS: "10000", ...extraEnv },
  });
  const rssIdle = rssMiB(app.pid);
  const jwt = await new SignJWT({ sub: crypto.randomUUID(), org_id: seeded.orgId }).setProtectedHeader({ alg: "HS256" }).setExpirationTime("1h").sign(new TextEncoder().encode(JWT_SECRET));
  return {
    ...seeded,
    app,
    loadStart,
    rssIdle,
    headers: { authorization: `Bearer ${jwt}` },
    async stop() {
      await app.stop();
      rmSync(dataDir, { recursive: true, force: true });
      await deleteRedisPrefix(prefix);
    },
  };
}
