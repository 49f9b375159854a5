import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../db/client.ts";
import type { SqlInstrument } from "../../db/instrument.ts";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { png } from "../support/media-files.ts";
import { type OtlpReceiver, otlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.ts";
import { type PgWireCounter, pgWireCounter } from "../support/pg-wire.ts";
import { parseMetrics } from "../support/prometheus.ts";
import { newOrg, seedDataDir, startServer, type TestServer } from "../support/server.ts";

/**
 * Every SQL statement is timed and traced once, inside a transaction too: postgres.js calls a
 * transaction's queries' `catch` itself as it sends them, and a wrapper timing every `then`
 * counted each statement of a transaction twice (a confirm's 18 statements gave 36 spans).
 * On PostgreSQL the statements are also counted on the wire, through a proxy that reads what
 * the driver sends.
 */
const TOKEN = "sql-once-token-0123456789abcdef";
const dirs: string[] = [];
let wire: PgWireCounter | null = null;

function viaWire(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = "127.0.0.1";
  u.port = String(port);
  return u.toString();
}

beforeAll(async () => {
  if (testEnv.databaseUrl) wire = await pgWireCounter(Number(new URL(testEnv.databaseUrl).port || 5432));
});
afterAll(async () => {
  await wire?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("SQL instrumentation", () => {
  test("a known transaction with a savepoint reports each statement once, as the driver sends them", async () => {
    const seen: string[] = [];
    const instrument: SqlInstrument = (kind, statement, run) => {
      seen.push(`${kind} ${statement}`);
      return run();
    };
    let url: string | undefined;
    let dataDir = "";
    if (testEnv.databaseUrl) url = viaWire(testEnv.databaseUrl, wire!.port);
    else {
      const dir = mkdtempSync(join(tmpdir(), "media-sql-once-"));
      dirs.push(dir);
      await seedDataDir(dir);
      dataDir = join(dir, "db");
    }
    // One connection, opened before counting: its first statements (the driver's type lookup) are not the transaction's.
    const database = await openDatabase({ url, dataDir, poolSize: 1, instrument });
    try {
      await database.db.execute(sql`select 'warm-up'`);
      seen.length = 0;
      wire?.reset();
      await database.db.transaction(async (tx) => {
        await tx.execute(sql`select 'one'`);
        await tx.execute(sql`select 'two'`);
        await tx.transaction(async (inner) => {
          await inner.execute(sql`select 'three'`);
        });
      });
      const statements = seen.filter((s) => s.startsWith("statement "));
      expect(statements.filter((s) => s.includes("'one'"))).toHaveLength(1);
      expect(statements.filter((s) => s.includes("'two'"))).toHaveLength(1);
      expect(statements.filter((s) => s.includes("'three'"))).toHaveLength(1);
      if (wire) {
        // postgres.js sends begin, commit and the savepoint itself: they are the transaction spans' own.
        expect(seen).toEqual(["transaction begin", "statement select 'one'", "statement select 'two'", "transaction savepoint", "statement select 'three'"]);
        const sent = await eventually(async () => (wire!.sent().includes("commit") ? wire!.sent() : undefined), { what: "the transaction's commit on the wire" });
        expect(sent.map((s) => s.trim().replace(/^savepoint .*/, "savepoint"))).toEqual(["begin", "select 'one'", "select 'two'", "savepoint", "select 'three'", "commit"]);
      } else {
        // PGlite's savepoints are statements drizzle sends through the connection.
        expect(seen).toEqual(["transaction begin", "statement select 'one'", "statement select 'two'", "statement savepoint sp1", "statement select 'three'", "statement release savepoint sp1"]);
      }
    } finally {
      await database.close();
    }
  });

  describe("through the server", () => {
    let receiver: OtlpReceiver;
    let server: TestServer;

    beforeAll(async () => {
      receiver = otlpReceiver();
      server = await startServer({
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, METRICS_TOKEN: TOKEN, ...(wire ? { DATABASE_URL: viaWire(testEnv.databaseUrl!, wire.port) } : {}) },
      });
    });
    afterAll(async () => {
      await server?.stop();
      receiver?.stop();
    });

    async function statementCount(): Promise<{ statements: number }> {
      const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const scrape = parseMetrics(await res.text());
      let statements = 0;
      for (const s of scrape.samples("media_db_query_duration_seconds_count")) if (s.labels.operation !== "transaction") statements += s.value;
      return { statements };
    }

    test("a confirm's statements give one span each, and the statement count rises by as many", async () => {
      const org = await newOrg(server);
      const bucket = (await org.admin.post("/api/buckets", { name: "counted" })).body;
      const presigned = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "once.png", contentType: "image/png" });
      expect((await fetch(presigned.body.url, { method: "PUT", headers: presigned.body.headers, body: new Uint8Array(await png(40, 30)) })).status).toBe(200);

      const traceId = crypto.randomUUID().replaceAll("-", "");
      const confirmed = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "once.png" }, { traceparent: `00-${traceId}-${traceId.slice(0, 16)}-01` });
      expect(confirmed.status).toBe(200);
      const spans = await eventually(
        async () => {
          const inTrace = receiver.spans.filter((s) => s.traceId === traceId);
          return inTrace.some((s) => s.name === "POST /api/presign/confirm") ? inTrace : undefined;
        },
        { what: "the confirm's trace" },
      );
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const isStatement = (s: ReceivedSpan | undefined) => !!s && s.name.startsWith("db ") && s.name !== "db transaction";
      const statements = spans.filter(isStatement);
      expect(statements.length).toBeGreaterThan(3);
      // A statement timed twice was a statement span inside a statement span of the same text.
      for (const s of statements) expect(isStatement(byId.get(s.parentSpanId))).toBe(false);
      expect(spans.filter((s) => s.name === "db transaction").length).toBeGreaterThan(0);

      // The metric and the wire, over the whole server. A scrape sends a statement of its own
      // (the outbox count), counted by the next scrape: readings take the wire's count before
      // their scrape. The outbox poll may run in the window; a poll caught half-way (sent, not
      // yet counted) makes the measurement start over. Transaction control (begin, commit,
      // savepoints) belongs to the transaction spans.
      if (!wire) return;
      // The thumbnail job the confirm queued runs in this server: its statements, sent and counted
      // a moment apart, must not straddle the readings (on a busy machine it ran through all three).
      await eventually(
        async () => {
          const state = (await org.admin.get(`/api/media/${confirmed.body.id}`)).body.thumbnail?.state;
          return state && state !== "pending" ? true : undefined;
        },
        { what: "the confirm's thumbnail job to finish" },
      );
      const control = /^\s*(begin|commit|rollback|savepoint|release)\b/i;
      const reading = async () => {
        const sent = wire!.sent().filter((s) => !control.test(s)).length;
        return { sent, ...(await statementCount()) };
      };
      const mismatches: string[] = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        const before = await reading();
        const again = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "once.png" });
        expect(again.status).toBe(200);
        const after = await reading();
        const statements = after.statements - before.statements;
        expect(statements).toBeGreaterThan(0);
        if (after.sent - before.sent === statements) return;
        mismatches.push(`sent ${after.sent - before.sent}, counted ${statements}`);
      }
      throw new Error(`the statement count never matched the wire: ${mismatches.join("; ")}`);
    }, 60_000);
  });
});
