/**
 * `npm run bench -- list`: the first page of GET /api/media, with its total, over 1,000,000
 * objects in one organization (BENCH_OBJECTS), on real PostgreSQL, through the whole HTTP
 * endpoint. Target: p95 <= 10 ms for the default listing.
 */
import { SignJWT } from "jose";
import { loadConfig } from "../app/config.ts";
import { createLogger } from "../app/log.ts";
import { createServices } from "../app/services.ts";
import { createHttpApp } from "../app/http.ts";
import { percentiles, seededDatabase, timeIt } from "./_seed.ts";

const n = Number(process.env.BENCH_OBJECTS ?? 1_000_000);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 100);
const { url, orgId, bucketId } = await seededDatabase(n);

const config = loadConfig({ DATABASE_URL: url, JWT_SECRET: "bench-secret-bench-secret", LOG_LEVEL: "error", DATA_DIR: "bench/.work/list", STORAGE_PORT: "0", RATE_LIMIT_PER_MINUTE: "100000000" });
const services = await createServices(config, { log: createLogger("error") });
const server = createHttpApp(services).listen({ hostname: "127.0.0.1", port: 0 });
const base = `http://127.0.0.1:${server.server!.port}`;
const jwt = await new SignJWT({ sub: crypto.randomUUID(), org_id: orgId }).setProtectedHeader({ alg: "HS256" }).setExpirationTime("1h").sign(new TextEncoder().encode("bench-secret-bench-secret"));
const headers = { authorization: `Bearer ${jwt}` };

const cases = [
  { label: "default (newest first)", qs: "" },
  { label: "bucket filter", qs: `bucketId=${bucketId}` },
  { label: "sort by size", qs: "sort=size" },
  { label: "kind filter", qs: "kind=video" },
  { label: "key substring (rare)", qs: "search=rare-" },
  { label: "page 100 (offset 4950)", qs: "offset=4950" },
];
console.log(`\nGET /api/media over ${n.toLocaleString("en-US")} objects, ${iterations} sequential requests each (ms)\n`);
console.log("case                     |    total | p50    | p95    | p99");
for (const { label, qs } of cases) {
  let total = 0;
  const times = await timeIt(iterations, async () => {
    const res = await fetch(`${base}/api/media?${qs}`, { headers });
    total = ((await res.json()) as { total: number }).total;
  });
  const p = percentiles(times);
  console.log(`${label.padEnd(24)} | ${String(total).padStart(8)} | ${p.p50.toFixed(1).padStart(6)} | ${p.p95.toFixed(1).padStart(6)} | ${p.p99.toFixed(1).padStart(6)}`);
}
await server.stop(true);
await services.close();
