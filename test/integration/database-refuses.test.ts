// One pass: the database is a private PostgreSQL cluster of this file; the run's backends play no part.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createLogger } from "../../app/log.ts";
import { hashSecret } from "../../domain/access/secrets.ts";
import { type PrivatePostgres, privatePostgres, privatePostgresUnavailable } from "../support/faults.ts";
import { eventually } from "../support/eventually.ts";
import { type OtlpReceiver, otlpReceiver } from "../support/otlp-receiver.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * A database that refuses new sessions (ALTER DATABASE ... ALLOW_CONNECTIONS false answers
 * 55000, a renamed or dropped one 3D000) is unavailable, not broken: every call answered
 * 500 internal_error, and the log line held the failed statement's parameters, among them the
 * SHA-256 of the caller's API key. Now: 503 unavailable with Retry-After, and the log, read as
 * the real logger writes it, names the failure without any parameter.
 */
const DB = "media_refusing";
let pg: PrivatePostgres;
let admin: ReturnType<typeof postgres>;
let server: TestServer;
let org: TestOrg;
let receiver: OtlpReceiver;
const logged: string[] = [];
const realWrite = process.stderr.write.bind(process.stderr);

/** New sessions refused, and the sessions the server holds ended (they would carry on working). */
async function refuse(): Promise<void> {
  await admin.unsafe(`alter database ${DB} allow_connections false`);
  await admin.unsafe(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${DB}'`);
}

async function allow(): Promise<void> {
  await admin.unsafe(`alter database ${DB} allow_connections true`);
}

describe.skipIf(privatePostgresUnavailable !== null)("a database that refuses connections", () => {
  beforeAll(async () => {
    pg = await privatePostgres();
    admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${DB}`);
    const url = new URL(pg.url);
    url.pathname = `/${DB}`;
    // The real logger at its most talkative, its lines kept instead of printed.
    process.stderr.write = ((chunk: string | Uint8Array) => {
      logged.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk));
      return true;
    }) as typeof process.stderr.write;
    receiver = otlpReceiver();
    server = await startServer({ env: { DATABASE_URL: url.toString(), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, log: createLogger("debug") });
    org = await newOrg(server);
  }, 120_000);
  afterAll(async () => {
    process.stderr.write = realWrite;
    await allow().catch(() => {});
    await server?.stop();
    await admin?.end({ timeout: 5 });
    await pg?.destroy();
    receiver?.stop();
  });

  test("ALLOW_CONNECTIONS false: 503 unavailable with Retry-After, and no parameter in the log", async () => {
    // A key the service has not seen yet: its first call looks it up by the secret's hash.
    const fresh = await org.keyClient(["read"]);
    const hash = hashSecret(fresh.secret);
    logged.length = 0;
    await refuse();
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fresh.get("/api/buckets");
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe("unavailable");
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      }
    } finally {
      await allow();
    }
    const log = logged.join("");
    expect(log).toContain("backing service unavailable");
    expect(log).toContain('"code":"55000"');
    expect(log).not.toContain(hash);
    expect(log).not.toContain(fresh.secret);
    // Nor in the traces: the failed statement's span records the exception without them.
    const failed = await eventually(
      async () => {
        const spans = receiver.spans.filter((s) => s.name.startsWith("db ") && s.events.some((e) => e.name === "exception"));
        return spans.length > 0 ? spans : undefined;
      },
      { what: "a failed statement's span" },
    );
    expect(JSON.stringify(receiver.spans)).not.toContain(hash);
    // Once it takes sessions again, the same call is answered.
    await eventually(async () => ((await fresh.get("/api/buckets")).status === 200 ? true : undefined), { what: "the database to be used again" });
  }, 120_000);

  test("renamed away (3D000): 503 unavailable, and back again afterwards", async () => {
    await refuse();
    // Ended sessions take a moment to go; a rename waits for none to be left.
    await eventually(async () => (await admin.unsafe(`alter database ${DB} rename to ${DB}_away`), true), { what: "the database renamed" });
    try {
      await admin.unsafe(`alter database ${DB}_away allow_connections true`);
      logged.length = 0;
      // The first call may still meet a session ended under it (ECONNRESET); the next ones ask for a new one.
      const answers: string[] = [];
      await eventually(
        async () => {
          const res = await org.admin.get("/api/buckets");
          answers.push(`${res.status} ${res.body.error?.code} retry-after ${res.headers.get("retry-after")}`);
          return logged.join("").includes('"code":"3D000"') ? true : undefined;
        },
        { what: "a call refused with 3D000" },
      );
      expect(new Set(answers)).toEqual(new Set(["503 unavailable retry-after 5"]));
    } finally {
      await admin.unsafe(`alter database ${DB}_away rename to ${DB}`).catch(() => {});
      await allow();
    }
    await eventually(async () => ((await org.admin.get("/api/buckets")).status === 200 ? true : undefined), { what: "the database back under its name" });
    // No span's recorded failure carries a statement's parameters either.
    const events = JSON.stringify(receiver.spans.map((s) => s.events));
    expect(events).not.toContain("\nparams:");
    expect(JSON.stringify(receiver.spans.map((s) => s.events))).not.toContain(org.orgId);
  }, 120_000);
});
