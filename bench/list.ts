/**
 * `npm run bench -- list`: GET /api/media over 1,000,000 objects in one organization
 * (BENCH_OBJECTS; seeded once into a reusable database by bench/_seed.ts), on real PostgreSQL,
 * through the whole HTTP endpoint of a server in its own process (bench/_target.ts).
 * Target: the first page with its `total`, p95 <= 10 ms. Also the server's RSS after serving
 * listings over the million objects. BENCH_ITERATIONS sequential requests per case (200).
 * BENCH_NO_WRITE=1 leaves bench/results/list.md alone.
 */
import postgres from "postgres";
import { int, load1, machine, ms, rssMiB, writeSection } from "./_load.ts";
import { percentiles, timeIt } from "./_seed.ts";
import { seededServer } from "./_seeded-server.ts";

const n = Number(process.env.BENCH_OBJECTS ?? 1_000_000);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 200);
const server = await seededServer("list", n);
const { url, orgId, bucketId, app, loadStart, rssIdle, headers } = server;
try {
  const cases = [
    { label: "default (newest first)", qs: "", target: true },
    { label: "bucket filter", qs: `bucketId=${bucketId}`, target: true },
    { label: "page 100 (offset 4950)", qs: "offset=4950" },
    { label: "key substring (rare)", qs: "search=rare-" },
    { label: "kind filter (1 in 6)", qs: "kind=video" },
    { label: "sort by size", qs: "sort=size" },
  ];
  const rows: string[] = [];
  let met = true;
  for (const { label, qs, target } of cases) {
    let total = 0;
    const times = await timeIt(label.startsWith("sort") || label.startsWith("kind") ? Math.min(iterations, 20) : iterations, async () => {
      const res = await fetch(`${app.url}/api/media?${qs}`, { headers });
      if (res.status !== 200) throw new Error(`${res.status} for ${qs}`);
      total = ((await res.json()) as { total: number }).total;
    });
    const p = percentiles(times);
    if (target && p.p95 > 10) met = false;
    process.stderr.write(`${label}: total ${total}, p50 ${ms(p.p50)} p95 ${ms(p.p95)} p99 ${ms(p.p99)}\n`);
    rows.push(`| ${label}${target ? " (target)" : ""} | \`${qs || "(none)"}\` | ${int(total)} | ${ms(p.p50)} / **${ms(p.p95)}** / ${ms(p.p99)} |`);
  }
  const rssAfter = rssMiB(app.pid);
  const pg = postgres(url, { max: 1, onnotice: () => {} });
  const [v] = await pg`select current_setting('server_version') as pg, pg_size_pretty(pg_database_size(current_database())) as size`;
  await pg.end();
  const section = [
    "## list — GET /api/media over 1,000,000 objects",
    "",
    `\`npm run bench -- list\`. ${int(n)} objects in one organization and bucket, seeded in bulk by \`bench/_seed.ts\``,
    `(database ${v!.size}, reused between runs). The real server in its own process (PostgreSQL, Redis), a dashboard JWT;`,
    `${iterations} sequential requests per case after 10 of warm-up (20 for the two slow cases), each timed from the client`,
    "(a `fetch` in the bench process) to the parsed JSON: authentication, rate limit, the page of 50 with each",
    "object's tags, categories and thumbnail, and the total.",
    "",
    `Date ${machine({ pg: v!.pg as string, redis: "7" }).replace(", Redis 7, wrk 4.1.0", "")}. Load average (1 min) ${loadStart} at the start, ${load1()} at the end.`,
    "",
    "| case | query | total | p50 / p95 / p99 (ms) |",
    "|---|---|---:|---|",
    ...rows,
    "",
    `Server RSS: ${rssIdle.toFixed(0)} MiB after start-up, ${rssAfter.toFixed(0)} MiB after serving these listings over ${int(n)} objects`,
    "(the objects live in PostgreSQL; the server holds a page at a time).",
    "",
    `Target: first page with \`total\` p95 <= 10 ms — **${met ? "met" : "missed"}**. The total is a kept counter (org or bucket),`,
    "not a count, so the first page costs the same at any size. Not targets: a kind filter or key substring counts",
    "its matches (a count over 166,667 rows for a kind that is 1 in 6), and sorting by size has no index (a sort of the",
    "whole organization); both grow with the organization.",
  ].join("\n");
  process.stdout.write(`${section}\n`);
  if (!process.env.BENCH_NO_WRITE) writeSection("list", section);
} finally {
  await server.stop();
}
