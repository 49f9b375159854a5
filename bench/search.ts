/**
 * `npm run bench -- search`: search with facets over 1,000,000 objects in one organization
 * (BENCH_OBJECTS), on real PostgreSQL. Each query runs through the whole HTTP endpoint and,
 * as the baseline, as the same SQL called directly (PostgresSearch.search) in the same run.
 * Targets: mid-frequency terms p95 <= 30 ms and <= 1.5x the direct SQL.
 */
import { SignJWT } from "jose";
import { loadConfig } from "../app/config.ts";
import { createServices } from "../app/services.ts";
import { createLogger } from "../app/log.ts";
import { parseQuery } from "../domain/search-query.ts";
import { createHttpApp } from "../app/http.ts";
import { PostgresSearch } from "../search/postgres.ts";
import { percentiles, seededDatabase, timeIt } from "./_seed.ts";

const n = Number(process.env.BENCH_OBJECTS ?? 1_000_000);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 100);
const { url, orgId } = await seededDatabase(n);

const config = loadConfig({ DATABASE_URL: url, JWT_SECRET: "bench-secret-bench-secret", LOG_LEVEL: "error", DATA_DIR: "bench/.work/search", STORAGE_PORT: "0", RATE_LIMIT_PER_MINUTE: "100000000" });
const services = await createServices(config, { log: createLogger("error") });
const server = createHttpApp(services).listen({ hostname: "127.0.0.1", port: 0 });
const base = `http://127.0.0.1:${server.server!.port}`;
const jwt = await new SignJWT({ sub: crypto.randomUUID(), org_id: orgId }).setProtectedHeader({ alg: "HS256" }).setExpirationTime("1h").sign(new TextEncoder().encode("bench-secret-bench-secret"));
const headers = { authorization: `Bearer ${jwt}` };
const direct = new PostgresSearch(services.deps.db);

const queries = [
  { label: "rare (0.01%)", q: "rare" },
  { label: "filler word (~0.1%)", q: "w123" },
  { label: "mid (1%)", q: "mid" },
  { label: "mid + kind filter", q: "mid", extra: "&kind=image" },
  { label: "frequent (10%)", q: "frequent" },
  { label: "common (50%)", q: "common" },
];

console.log(`\nsearch over ${n.toLocaleString("en-US")} objects, ${iterations} sequential requests each (ms)\n`);
console.log("query                  | matches  | HTTP p50 | HTTP p95 | HTTP p99 | SQL p50 | SQL p95 | p95 ratio");
for (const { label, q, extra = "" } of queries) {
  let total = 0;
  const http = await timeIt(iterations, async () => {
    const res = await fetch(`${base}/api/search?q=${encodeURIComponent(q)}&limit=50${extra}`, { headers });
    const body = (await res.json()) as { total: number };
    total = body.total;
  });
  const kind = extra.includes("kind=image") ? "image" : null;
  const sqlTimes = await timeIt(iterations, () =>
    direct.search({ orgId, query: parseQuery(q), bucketId: null, kind, tagIds: [], categoryGroups: [], sizeMin: null, sizeMax: null, dateFrom: null, dateBefore: null, limit: 50, offset: 0 }),
  );
  const h = percentiles(http);
  const s = percentiles(sqlTimes);
  console.log(
    `${label.padEnd(22)} | ${String(total).padStart(8)} | ${h.p50.toFixed(1).padStart(8)} | ${h.p95.toFixed(1).padStart(8)} | ${h.p99.toFixed(1).padStart(8)} | ${s.p50.toFixed(1).padStart(7)} | ${s.p95.toFixed(1).padStart(7)} | ${(h.p95 / s.p95).toFixed(2)}x`,
  );
}
await server.stop(true);
await services.close();
