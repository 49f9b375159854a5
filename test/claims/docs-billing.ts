import { expect } from "bun:test";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import type { Db } from "../../db/client.ts";
import { EgressLedger } from "../../domain/usage/egress-ledger.ts";
import { ApiCallMeter } from "../../domain/usage/meter.ts";
import type { PageClaims } from "./claim.ts";
import { org, withServer } from "../support/claim-checks.ts";
import { deliver, WEBHOOK_SECRET } from "../support/billing.ts";
import { newBucket } from "../support/objects.ts";
import { upload } from "../support/upload.ts";

const BILLING = "test/integration/billing.test.ts";
const USAGE = "test/integration/usage.test.ts";
const LEDGER = "test/integration/egress-ledger.test.ts";
const HOOK = "test/integration/webhook.test.ts";

export default {
  page: "docs/billing.md",
  claims: [
    {
      says: "Every billing route needs the admin scope and a key that is not restricted to a bucket (billing is the whole organization's: a restricted key gets 403); the usage routes are reads (read). The payment webhook needs no credential: its signature is the credential.",
      check: async (server) => {
        const o = await org(server);
        const bucket = await newBucket(o);
        const restrictedAdmin = await o.keyClient(["admin"], { bucketId: bucket.id });
        for (const path of ["/api/billing/subscription", "/api/billing/invoices"]) {
          const res = await restrictedAdmin.get(path);
          expect([path, res.status, res.body.error.code]).toEqual([path, 403, "forbidden"]);
        }
        const reader = await o.keyClient(["read"]);
        for (const path of ["/api/usage", "/api/usage/history", "/api/usage/events"]) expect((await reader.get(path)).status).toBe(200);
        expect((await reader.get("/api/billing/subscription")).status).toBe(403);
        // No credential reaches the webhook's own checks: here, no webhook secret is configured.
        const hook = await fetch(`${server.url}/api/payments/webhook`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
        expect(hook.status).toBe(501);
        expect(((await hook.json()) as { error: { code: string } }).error.code).toBe("not_configured");
      },
    },
    { says: "| GET /api/usage/history | days 1..365, default 30 |", by: { file: USAGE, test: "days is 1..365, default 30" } },
    { says: "| GET /api/usage/history | days 1..365, default 30 | { from, to, data: [{ date, usedStorage, allocatedStorage, objectCount, egressBytes, apiCalls }] }, oldest first |", by: { file: USAGE, test: "one point per day; quiet days repeat the previous day's storage; days before the organization are left out" } },
    { says: "| GET /api/usage/events | days 1..365 default 30; limit 1..200 default 50; offset ≥ 0 default 0; type optional | { data, total, hasMore }, newest first |", by: { file: USAGE, test: "bounds: days 1..365, limit 1..200 (default 50), offset >= 0, type from the list" } },
    {
      says: "| GET /api/usage/events | days 1..365 default 30; limit 1..200 default 50; offset ≥ 0 default 0;",
      check: async (server) => {
        const o = await org(server);
        const bucket = await newBucket(o);
        const obj = await upload(o.admin, bucket.id, "counted.bin", "egress");
        // 51 download URLs: 51 events, plus the upload's own.
        for (let i = 0; i < 51; i++) expect((await o.admin.post("/api/presign/download", { objectId: obj.id })).status).toBe(200);
        const first = (await o.admin.get("/api/usage/events")).body;
        expect([first.data.length, first.total, first.hasMore]).toEqual([50, 52, true]);
        const explicit = (await o.admin.get("/api/usage/events?days=30&limit=50&offset=0")).body;
        expect(explicit.data.map((e: { id: string }) => e.id)).toEqual(first.data.map((e: { id: string }) => e.id));
      },
    },
    {
      says: "Two appended confirms that cross a line only together are announced, and buy capacity, when the rollup folds them (within about 2 s).",
      by: { file: "test/integration/storage-deltas.test.ts", test: "changes that only together cross a threshold are announced by the fold, once" },
    },
    {
      says: "capacity, when the rollup folds them (within about 2 s).",
      check: async (server) => {
        expect(server.services.rollup.intervalMs).toBe(2_000);
      },
    },
    { says: "a reservation is refused (403 quota_exceeded) when used + reserved + declared would pass allocatedStorage.", by: { file: "test/integration/uploads.test.ts", test: "a reservation beyond the allocation is 403 quota_exceeded" } },
    {
      says: "written as usage_events rows (flagged rollup_pending) in one statement at most 250 ms later, or at once when 1,000 wait;",
      check: async (server) => {
        const ledger = server.services.deps.egress!;
        expect([ledger.intervalMs, ledger.batchSize]).toEqual([250, 1_000]);
      },
    },
    { says: "or at once when 1,000 wait;", by: { file: LEDGER, test: "a full batch is written without waiting for the interval" } },
    { says: "A rollup on every API instance (every 2 s, for update skip locked, and on shutdown)", check: async (server) => expect(server.services.rollup.intervalMs).toBe(2_000) },
    { says: "another instance's URLs show up within 250 ms.", check: async (server) => expect(server.services.deps.egress!.intervalMs).toBe(250) },
    { says: "a clean shutdown (SIGTERM/SIGINT) writes the batch;", by: { file: LEDGER, test: "a clean shutdown writes the waiting batch" } },
    {
      says: "a process killed outright loses the egress of its last 250 ms, and a write the database refuses for a while is kept in memory (up to 100,000 events) and tried again.",
      check: async (server) => {
        // A database that is not there: nothing listens on port 1.
        const client = postgres("postgres://postgres@127.0.0.1:1/none", { max: 1, connect_timeout: 1, onnotice: () => {} });
        try {
          const ledger = new EgressLedger(drizzle(client) as unknown as Db, server.services.deps.log, 60_000, 1_000_000);
          const e = { kind: "download" as const, at: new Date(), objectId: crypto.randomUUID(), bucketId: crypto.randomUUID(), key: "k", bytes: 1 };
          for (let i = 0; i < 100_005; i++) ledger.add(crypto.randomUUID(), e);
          await ledger.flush();
          expect(ledger.waiting).toBe(100_000);
        } finally {
          await client.end({ timeout: 1 });
        }
      },
    },
    { says: "a write the database refuses for a while is kept in memory", by: { file: LEDGER, test: "a write the database does not take keeps the events for the next one" } },
    { says: "Events of an organization deleted before the write are dropped", by: { file: LEDGER, test: "events of an organization deleted meanwhile are dropped, and the rest of the batch is written" } },
    { says: "its outcome (a 404 counts; a 401 does not;", by: { file: USAGE, test: "every authenticated REST call and MCP request counts, exactly, once flushed" } },
    {
      says: "the webhook, docs, OpenAPI and health routes do not).",
      check: async (server) => {
        const o = await org(server);
        const calls = async () => {
          await server.services.apiCalls.flush();
          return (await o.admin.get("/api/usage")).body.apiCallsThisMonth as number;
        };
        const before = await calls();
        for (const path of ["/healthz", "/readyz", "/openapi.json", "/docs"]) await (await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${o.adminKey.secret}` } })).arrayBuffer();
        await (await fetch(`${server.url}/api/payments/webhook`, { method: "POST", headers: { authorization: `Bearer ${o.adminKey.secret}` }, body: "{}" })).arrayBuffer();
        // Only the usage read that took `before` is new.
        expect(await calls()).toBe(before + 1);
      },
    },
    {
      says: "organization every 5 seconds, and on a clean shutdown (SIGTERM/SIGINT). So apiCallsThisMonth may lag by up to 5 s; a crash loses at most those 5 s.",
      check: async (server) => {
        expect(server.services.apiCalls.intervalMs).toBe(5_000);
        expect(new ApiCallMeter(server.services.deps).intervalMs).toBe(5_000);
      },
    },
    { says: "organization every 5 seconds, and on a clean shutdown (SIGTERM/SIGINT).", by: { file: USAGE, test: "counts still in memory are written on a clean shutdown" } },
    { says: "Defaults before the first PUT: disabled, 10 GB, 90 %, 0 cents.", by: { file: BILLING, test: "a new organization is on the first configured tier, with auto-capacity off" } },
    { says: "unknown key: 400 validation_error (the details list the known keys);", by: { file: BILLING, test: "unknown tiers are 400; a more expensive tier is 409; the current tier changes nothing" } },
    { says: "a tier that costs more than the current one: 409 conflict", by: { file: BILLING, test: "unknown tiers are 400; a more expensive tier is 409; the current tier changes nothing" } },
    { says: "409 conflict when usedStorage exceeds what the target would allocate:", by: { file: BILLING, test: "409 while usage exceeds the target plan; succeeds once it fits" } },
    { says: "its included storage plus the capacity already bought (bought capacity stays, so it counts).", by: { file: BILLING, test: "capacity bought stays with the organization and counts towards the target" } },
    { says: "| STRIPE_SECRET_KEY | unset: GET /api/billing/invoices and GET /api/billing/portal answer 501 not_configured |", by: { file: BILLING, test: "invoices and portal answer 501 not_configured" } },
    { says: "| STRIPE_WEBHOOK_SECRET | unset: POST /api/payments/webhook answers 501 not_configured |", by: { file: BILLING, test: "a provider failure is 503 unavailable; the webhook without its secret is 501" } },
    { says: "GET /api/billing/invoices?limit=1..100 (default 20): the customer's invoices, newest first;", by: { file: BILLING, test: "limit is 1..100 and defaults to 20, as asked of the provider" } },
    { says: "Provider outages and rate limits are 503 unavailable;", by: { file: BILLING, test: "a provider failure is 503 unavailable; the webhook without its secret is 501" } },
    { says: "The Stripe-Signature header (t=…,v1=…) is verified with STRIPE_WEBHOOK_SECRET over the raw body; any matching v1 is accepted (secret rotation);", by: { file: HOOK, test: "any matching v1 signature is accepted (secret rotation sends several)" } },
    { says: "a timestamp older than 300 s is refused.", by: { file: HOOK, test: "a stale signature (older than 300 s) is refused and records nothing" } },
    { says: '| 200 { received: true, eventId, outcome: "applied" } | the event\'s effect was recorded |', by: { file: HOOK, test: "subscription created: the organization is linked to the customer and moves to the plan" } },
    { says: '| 200 … "duplicate" | this event id was already processed (a redelivery, even a concurrent one) |', by: { file: HOOK, test: "an event delivered three times concurrently applies once" } },
    { says: '| 200 … "ignored" | an unknown type, no organization found, or a subscription event older than the state held |', by: { file: HOOK, test: "unknown event types, and events for no known organization, are acknowledged and ignored" } },
    { says: '| 200 … "ignored" | an unknown type, no organization found, or a subscription event older than the state held |', by: { file: HOOK, test: "an event older than the subscription state already applied is ignored" } },
    { says: "| 400 bad_request, details.reason = missing, malformed, mismatch, stale, body | refused; nothing recorded |", by: { file: HOOK, test: "a tampered body, another secret, a missing or malformed header are refused and record nothing" } },
    {
      says: "| 400 bad_request, details.reason = missing, malformed, mismatch, stale, body |",
      check: async () => {
        await withServer({ STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET }, async (hooked) => {
          const res = await deliver(hooked.url, "not json");
          expect([res.status, res.body.error.code, res.body.error.details.reason]).toEqual([400, "bad_request", "body"]);
        });
      },
    },
    { says: "| 501 not_configured | no webhook secret |", by: { file: BILLING, test: "a provider failure is 503 unavailable; the webhook without its secret is 501" } },
  ],
  notPromises: [],
} satisfies PageClaims;
