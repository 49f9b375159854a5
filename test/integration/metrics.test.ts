import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CLI, cliEnv, removeTempConfigHomes } from "../support/cli.ts";
import { eventually } from "../support/eventually.ts";
import { parseMetrics, type Scrape } from "../support/prometheus.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { png } from "../support/media-files.ts";
import { upload } from "../support/upload.ts";

/**
 * /metrics after a known workload: every count the workload caused is there, exactly, with the
 * labels it should have (surface, tool, status); nothing carries an id.
 */
const TOKEN = "metrics-token-0123456789abcdef";
let server: TestServer;
let org: TestOrg;

async function scrape(): Promise<Scrape> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  return parseMetrics(await res.text());
}

async function mcpClient(secret: string, userAgent?: string): Promise<Client> {
  const client = new Client({ name: "metrics-test", version: "1" });
  const headers: Record<string, string> = { authorization: `Bearer ${secret}`, ...(userAgent ? { "user-agent": userAgent } : {}) };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers } }));
  return client;
}

beforeAll(async () => {
  server = await startServer({ env: { METRICS_TOKEN: TOKEN, METRICS_PORT: "0", RATE_LIMIT_PER_MINUTE: "40" } });
  org = await newOrg(server);
});
afterAll(async () => {
  await server?.stop();
  removeTempConfigHomes();
});

describe("/metrics", () => {
  test("is refused without the token on the main port, and served without one on METRICS_PORT", async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer wrong-token-wrong-token-00" } })).status).toBe(401);
    const side = await fetch(`http://127.0.0.1:${server.services.opsPort}/metrics`);
    expect(side.status).toBe(200);
    expect(await side.text()).toContain("media_requests_total");
  });

  test("counts a known workload exactly", async () => {
    const before = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);
    let after = before;

    // REST: three lists, one 404, an upload with its confirm, a download URL, a search.
    for (let i = 0; i < 3; i++) expect((await org.admin.get("/api/buckets")).status).toBe(200);
    expect((await org.admin.get(`/api/buckets/${crypto.randomUUID()}`)).status).toBe(404);
    const bucket = (await org.admin.post("/api/buckets", { name: "metrics" }, { "idempotency-key": "metrics-bucket-1" })).body;
    const replayed = await org.admin.post("/api/buckets", { name: "metrics" }, { "idempotency-key": "metrics-bucket-1" });
    expect(replayed.headers.get("idempotency-replayed")).toBe("true");
    // A picture: a file with no thumbnail to make is settled at confirm, without a job.
    const picture = await png(40, 30);
    const object = await upload(org.admin, bucket.id, "notes/a.png", picture, { contentType: "image/png" });
    expect((await org.admin.post("/api/presign/download", { objectId: object.id })).status).toBe(200);
    expect((await org.admin.get("/api/search?q=notes")).status).toBe(200);

    // MCP, directly and through the CLI's bridge (told apart by its User-Agent); one tool error.
    const mcp = await mcpClient(org.adminKey.secret);
    await mcp.callTool({ name: "buckets_list", arguments: {} });
    const missing = await mcp.callTool({ name: "buckets_get", arguments: { id: crypto.randomUUID() } });
    expect(missing.isError).toBe(true);
    await mcp.close();
    const bridged = await mcpClient(org.adminKey.secret, "media-cli/0.1.0");
    await bridged.callTool({ name: "buckets_list", arguments: {} });
    await bridged.close();

    // Another key runs into the rate limit (40 a minute, per key).
    const reader = await org.keyClient(["read"]);
    let limited = 0;
    for (let i = 0; i < 45; i++) if ((await reader.get("/api/usage")).status === 429) limited++;
    expect(limited).toBeGreaterThan(0);

    await eventually(async () => ((await scrape()).value("media_job_runs_total", { kind: "derivatives.generate", outcome: "completed" }) > before.value("media_job_runs_total", { kind: "derivatives.generate", outcome: "completed" }) ? true : undefined), {
      what: "the derivative job to run",
    });
    after = await scrape();

    const rest = (tool: string, status: string) => delta("media_requests_total", { surface: "rest", tool, status });
    expect(rest("buckets_list", "200")).toBe(3);
    expect(rest("buckets_get", "404")).toBe(1);
    expect(rest("buckets_create", "201")).toBe(2);
    expect(rest("presign_upload", "200")).toBe(1);
    expect(rest("presign_confirm", "200")).toBe(1);
    expect(rest("presign_download", "200")).toBe(1);
    expect(rest("search", "200")).toBe(1);
    expect(rest("usage_get", "200")).toBe(45 - limited);
    expect(rest("usage_get", "429")).toBe(limited);
    expect(delta("media_request_duration_seconds_count", { surface: "rest", tool: "buckets_list" })).toBe(3);

    expect(delta("media_requests_total", { surface: "mcp", tool: "buckets_list", status: "200" })).toBe(1);
    expect(delta("media_requests_total", { surface: "mcp", tool: "buckets_get", status: "404" })).toBe(1);
    expect(delta("media_requests_total", { surface: "cli", tool: "buckets_list", status: "200" })).toBe(1);

    expect(delta("media_rate_limited_total", { surface: "rest" })).toBe(limited);
    expect(delta("media_idempotent_replays_total", { surface: "rest" })).toBe(1);
    expect(delta("media_uploaded_bytes_total")).toBe(picture.byteLength);
    expect(delta("media_egress_issued_bytes_total", { kind: "download" })).toBe(picture.byteLength);
    expect(delta("media_search_duration_seconds_count", { backend: "postgres" })).toBe(1);
    // Jobs are the one count this server does not own alone: in the PostgreSQL + Redis run every
    // test server shares the database and the queue, so jobs left behind by servers stopped in
    // earlier files may run here too (and fail: their storage node is gone). Ours is among them,
    // and every run, whoever queued it, is timed exactly once.
    const completed = delta("media_job_runs_total", { kind: "derivatives.generate", outcome: "completed" });
    const failed = delta("media_job_runs_total", { kind: "derivatives.generate", outcome: "failed" });
    expect(completed).toBeGreaterThanOrEqual(1);
    expect(delta("media_job_duration_seconds_count", { kind: "derivatives.generate" })).toBe(completed + failed);
    // Confirm reads what was uploaded: one HEAD.
    expect(delta("media_storage_request_duration_seconds_count", { operation: "head" })).toBe(1);
    expect(delta("media_db_query_duration_seconds_count", { operation: "select" })).toBeGreaterThan(10);
    expect(delta("media_db_query_duration_seconds_count", { operation: "transaction" })).toBeGreaterThan(0);

    const max = after.value("media_db_pool_connections", { state: "max" });
    expect(max).toBe(server.services.backends.database === "postgres" ? 10 : 1);
    expect(after.samples("media_jobs").map((s) => s.labels.state)).toContain("outbox");
    expect(after.value("media_requests_in_flight")).toBe(0);
  }, 60_000);

  test("the CLI's real stdio bridge counts as surface cli", async () => {
    const before = await scrape();
    const client = new Client({ name: "metrics-bridge", version: "1" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp"], env: cliEnv({ url: server.url, key: org.adminKey.secret }), stderr: "pipe" }));
    await client.callTool({ name: "usage_get", arguments: {} });
    await client.close();
    const after = await scrape();
    const labels = { surface: "cli", tool: "usage_get", status: "200" };
    expect(after.value("media_requests_total", labels) - before.value("media_requests_total", labels)).toBe(1);
  });

  test("no label carries an id, a key or an organization", async () => {
    const text = (await scrape()).text;
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i);
    expect(text).not.toContain("notes/a.txt");
    for (const line of text.split("\n").filter((l) => l.startsWith("# TYPE media_"))) {
      const [, , name, type] = line.split(" ");
      // Prometheus conventions: counters end in _total, durations are in seconds, sizes in bytes.
      if (type === "counter") expect(name).toMatch(/_total$/);
      if (type === "histogram") expect(name).toMatch(/_seconds$/);
    }
  });

  test("the Grafana dashboard in docs/ asks only for metrics the service exposes", async () => {
    const text = (await scrape()).text;
    const dashboard = JSON.parse(readFileSync(join(import.meta.dir, "../../docs/grafana-dashboard.json"), "utf8"));
    const exprs: string[] = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(20);
    const names = new Set(exprs.flatMap((e) => [...e.matchAll(/\b(?:media|process|nodejs)_[a-z0-9_]+/g)].map((m) => m[0])));
    for (const name of names) {
      const family = name.replace(/_(bucket|count|sum)$/, "");
      expect({ name, exposed: text.includes(`# TYPE ${name} `) || text.includes(`# TYPE ${family} histogram`) }).toEqual({ name, exposed: true });
    }
  });
});
