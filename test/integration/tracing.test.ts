import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BullQueue } from "../../worker/bullmq-queue.ts";
import { testEnv } from "../support/env.ts";
import { eventually, WAIT_CEILING_MS } from "../support/eventually.ts";
import { png } from "../support/media-files.ts";
import { type OtlpReceiver, otlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.ts";
import { type Child, spawnScript } from "../support/processes.ts";
import { newOrg, startServer, type TestOrg, type TestServer, workerEnvFor } from "../support/server.ts";

/**
 * One trace from an HTTP request to the job it caused: a confirm sent with a W3C traceparent
 * is the parent of the server span, which holds the tool, its SQL statements, the storage
 * HEAD and the job's hand-over; the job's run (in the services run, in a separate
 * `npm run worker` process exporting JSON while the server exports protobuf) continues the
 * same trace, with its own storage and SQL spans. The receiver is a real HTTP server decoding
 * what the OTLP exporters send.
 */
const KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 };
const separateWorker = testEnv.mode === "services" && testEnv.redisUrl !== null;
const prefix = `${testEnv.redisPrefix}-tracing`;

let receiver: OtlpReceiver;
let server: TestServer;
let worker: Child | null = null;
let org: TestOrg;

beforeAll(async () => {
  receiver = otlpReceiver();
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
  server = await startServer({
    env: { ...otel, OTEL_SERVICE_NAME: "media-api", ...(separateWorker ? { WORKER_INLINE: "false", REDIS_PREFIX: prefix } : {}) },
  });
  if (separateWorker) {
    worker = spawnScript("worker/main.ts", { ...workerEnvFor(server, prefix), ...otel, OTEL_SERVICE_NAME: "media-worker", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
  }
  org = await newOrg(server);
});

afterAll(async () => {
  worker?.proc.kill("SIGTERM");
  await worker?.proc.exited;
  if (separateWorker) await (server?.services.queue as BullQueue | undefined)?.obliterate().catch(() => {});
  await server?.stop();
  receiver?.stop();
});

function childrenOf(spans: ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  return spans.filter((s) => s.parentSpanId === parent.spanId);
}

function descendantsOf(spans: ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  const walk = (p: ReceivedSpan) => {
    for (const c of childrenOf(spans, p)) {
      out.push(c);
      walk(c);
    }
  };
  walk(parent);
  return out;
}

describe("OpenTelemetry traces", () => {
  test("one trace from the request through the tool, SQL, storage and the job's hand-over into its run", async () => {
    const bucket = (await org.admin.post("/api/buckets", { name: "traced" })).body;
    const presigned = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "trace-me.png", contentType: "image/png" });
    expect((await fetch(presigned.body.url, { method: "PUT", headers: presigned.body.headers, body: new Uint8Array(await png(320, 200)) })).status).toBe(200);

    const traceId = crypto.randomUUID().replaceAll("-", "");
    const callerSpan = traceId.slice(0, 16);
    const confirmed = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "trace-me.png" }, { traceparent: `00-${traceId}-${callerSpan}-01` });
    expect(confirmed.status).toBe(200);

    const spans = await eventually(
      async () => {
        const inTrace = receiver.spans.filter((s) => s.traceId === traceId);
        const job = inTrace.find((s) => s.name === "job derivatives.generate");
        return job && inTrace.some((s) => s.parentSpanId === job.spanId && s.name === "storage put") ? inTrace : undefined;
      },
      { what: "the job's spans to arrive in the confirm's trace", timeoutMs: WAIT_CEILING_MS },
    );

    const root = spans.find((s) => s.name === "POST /api/presign/confirm")!;
    expect(root).toBeDefined();
    expect(root).toMatchObject({ service: "media-api", kind: KIND.server, parentSpanId: callerSpan });
    expect(root.attributes).toMatchObject({ "http.request.method": "POST", "http.route": "/api/presign/confirm", "http.response.status_code": 200, "media.tool": "presign_confirm", "media.surface": "rest" });

    const tool = childrenOf(spans, root).find((s) => s.name === "tool presign_confirm")!;
    expect(tool).toBeDefined();
    const inTool = descendantsOf(spans, tool);
    const sql = inTool.filter((s) => s.name.startsWith("db "));
    expect(sql.length).toBeGreaterThan(3);
    for (const s of sql) expect(s.kind).toBe(KIND.client);
    const insert = sql.find((s) => s.name === "db insert" && String(s.attributes["db.query.text"]).includes('"media_objects"'))!;
    expect(insert).toBeDefined();
    // Statements are sent with placeholders: no value of the request is in a span.
    expect(JSON.stringify(spans)).not.toContain("trace-me.png");
    const transaction = spans.find((s) => s.spanId === insert.parentSpanId)!;
    expect(transaction.name).toBe("db transaction");
    expect(inTool.some((s) => s.name === "storage head" && s.kind === KIND.client)).toBe(true);

    const handOver = inTool.find((s) => s.name === "enqueue derivatives.generate")!;
    expect(handOver).toMatchObject({ kind: KIND.producer });
    const job = spans.find((s) => s.name === "job derivatives.generate")!;
    expect(job).toMatchObject({ kind: KIND.consumer, parentSpanId: handOver.spanId, service: separateWorker ? "media-worker" : "media-api" });
    const inJob = descendantsOf(spans, job).map((s) => s.name);
    // The source: the embedded store's own file when the job runs in the node's process, else a GET.
    expect(inJob).toContain(separateWorker ? "storage get" : "storage file");
    expect(inJob).toContain("storage put");
    expect(inJob.some((n) => n.startsWith("db "))).toBe(true);

    expect(receiver.encodings.has("application/x-protobuf")).toBe(true);
    if (separateWorker) expect([...receiver.encodings].some((e) => e.includes("json"))).toBe(true);
  }, 3 * WAIT_CEILING_MS);

  test("a request without a traceparent starts its own trace; errors are marked", async () => {
    const res = await org.admin.get(`/api/buckets/${crypto.randomUUID()}`);
    expect(res.status).toBe(404);
    const span = await eventually(async () => receiver.spans.find((s) => s.name === "GET /api/buckets/:id" && s.attributes["http.response.status_code"] === 404), {
      what: "the 404's span",
    });
    expect(span.parentSpanId).toBe("");
    const tool = receiver.spans.find((s) => s.parentSpanId === span.spanId && s.name === "tool buckets_get")!;
    expect(tool.statusCode).toBe(2);
  });
});
