import { expect } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { deliverWebhook } from "../../domain/events/delivery.ts";
import { pruneEvents } from "../../domain/events/retention.ts";
import { webhookSender } from "../../worker/webhook-sender.ts";
import type { PageClaims } from "./claim.ts";
import { defaults, org } from "../support/claim-checks.ts";
import { eventually, WAIT_CEILING_MS } from "../support/eventually.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { startReceiver } from "../support/webhook-receiver.ts";

const HOUR_MS = 3_600_000;

/** The deliveries of an endpoint once `done` says they are where the check wants them. */
async function deliveriesOnce(o: TestOrg, endpointId: string, done: (d: any[]) => boolean, what: string): Promise<any[]> {
  return eventually(
    async () => {
      const list = (await o.admin.get(`/api/webhooks/${endpointId}/deliveries`)).body.data as any[];
      return done(list) ? list : undefined;
    },
    { timeoutMs: 60_000, what },
  );
}

const db = (server: TestServer) => server.services.deps.db;

const claims: PageClaims = {
  page: "docs/events.md",
  claims: [
    {
      says: "An organization registers up to 20 endpoints",
      check: async (server) => {
        const o = await org(server);
        for (let i = 0; i < 20; i++) expect((await o.admin.post("/api/webhooks", { url: `http://127.0.0.1:9/hook-${i}` })).status).toBe(201);
        const over = await o.admin.post("/api/webhooks", { url: "http://127.0.0.1:9/one-more" });
        expect(over.status).toBe(409);
        expect(over.body.error.code).toBe("conflict");
      },
    },
    {
      says: "`webhooks_rotate_secret` issues a new one; for 24 hours deliveries carry two signatures, one per secret",
      check: async (server) => {
        const o = await org(server);
        const rx = startReceiver();
        try {
          const ep = (await o.admin.post("/api/webhooks", { url: rx.url })).body;
          expect((await o.admin.put(`/api/webhooks/${ep.id}/rotate-secret`)).status).toBe(200);
          const [row] = rowsOf<{ left_ms: number }>(
            await db(server).execute(sql`select extract(epoch from previous_secret_expires_at - now()) * 1000 as left_ms from webhook_endpoints where id = ${ep.id}`),
          );
          expect(Math.abs(Number(row!.left_ms) - 24 * HOUR_MS)).toBeLessThan(60_000);
          const sent = async () => {
            const id = (await o.admin.post(`/api/webhooks/${ep.id}/test`)).body.eventId;
            return eventually(async () => rx.received.find((r) => r.id === id), { what: "the test event", timeoutMs: WAIT_CEILING_MS });
          };
          expect((await sent()).signature.split(" ")).toHaveLength(2);
          // Past the day, only the new secret signs.
          await db(server).execute(sql`update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second' where id = ${ep.id}`);
          expect((await sent()).signature.split(" ")).toHaveLength(1);
        } finally {
          rx.stop();
        }
      },
    },
    {
      says: "the event's id: the same on every attempt and on a redelivery",
      by: { file: "test/integration/webhooks.test.ts", test: "a delivery that fails every attempt disables the endpoint, visibly; redelivery after enabling sends the same event" },
    },
    {
      says: "the attempt's time, Unix seconds",
      by: { file: "test/integration/webhooks.test.ts", test: "the test event, and what every delivery carries" },
    },
    {
      says: "keyed with the base64-decoded part of the secret after `whsec_`",
      by: { file: "test/integration/webhooks.test.ts", test: "the test event, and what every delivery carries" },
    },
    {
      says: "space-separated when two secrets are valid",
      by: { file: "test/integration/webhooks.test.ts", test: "after a rotation both secrets verify for a day" },
    },
    {
      says: "describes each under `x-webhooks`",
      by: { file: "test/contract/registry.test.ts", test: "the events webhooks send are documented: each type's body and signature headers (x-webhooks)" },
    },
    {
      says: "the receiver sees the same `webhook-id` twice",
      by: { file: "test/hardening/faults-webhooks.test.ts", test: "the event is sent again by another worker and the delivery ends succeeded, once" },
    },
    {
      says: "**Success** is a 2xx answer within `WEBHOOK_TIMEOUT_MS` (10 s).",
      by: { file: "test/integration/webhooks.test.ts", test: "no answer within the deadline is retried like a failure" },
      check: defaults({ WEBHOOK_TIMEOUT_MS: 10_000 }),
    },
    {
      says: "Redirects are not followed.",
      by: { file: "test/unit/outbound.test.ts", test: "answers are returned whatever their status; redirects are not followed" },
    },
    {
      says: "**Retries** double from `WEBHOOK_BACKOFF_MS` (1 minute) up to `WEBHOOK_ATTEMPTS` (13) attempts: the last comes about 68 hours after the first.",
      check: async (server) => {
        await defaults({ WEBHOOK_BACKOFF_MS: 60_000, WEBHOOK_ATTEMPTS: 13 })();
        // 12 waits of 1, 2, 4 ... 2048 minutes between 13 attempts.
        const waits = Array.from({ length: 12 }, (_, i) => 60_000 * 2 ** i);
        expect(Math.round(waits.reduce((a, b) => a + b) / HOUR_MS)).toBe(68);
        // And the delivery really schedules them so: each failed attempt sets the next one a doubled wait later.
        const o = await org(server);
        const rx = startReceiver();
        rx.respond = () => 500;
        const ep = (await o.admin.post("/api/webhooks", { url: rx.url })).body;
        try {
          const sent = (await o.admin.post(`/api/webhooks/${ep.id}/test`)).body;
          const waitAfter = async (attempt: number) => {
            const [d] = await deliveriesOnce(o, ep.id, (l) => l[0]?.attempts.length === attempt, `attempt ${attempt} to be recorded`);
            const a = d.attempts.find((x: { attempt: number }) => x.attempt === attempt);
            return Date.parse(d.nextAttemptAt) - (Date.parse(a.startedAt) + a.latencyMs);
          };
          const first = await waitAfter(1);
          expect(first).toBeGreaterThan(60_000 - 1000);
          expect(first).toBeLessThan(60_000 + 5000);
          // Attempt 2 now, as its job would run it once due.
          await db(server).execute(sql`update webhook_deliveries set next_attempt_at = now() where id = ${sent.deliveryId}`);
          await deliverWebhook(server.services.deps, webhookSender(server.config.webhooks), { orgId: o.orgId, deliveryId: sent.deliveryId, attempt: 2 });
          const second = await waitAfter(2);
          expect(second).toBeGreaterThan(120_000 - 1000);
          expect(second).toBeLessThan(120_000 + 5000);
        } finally {
          // Its later attempts would only fail: no endpoint, no more attempts.
          await o.admin.delete(`/api/webhooks/${ep.id}`);
          rx.stop();
        }
      },
    },
    {
      says: "Finished deliveries and their events are kept 30 days.",
      check: async (server) => {
        const o = await org(server);
        const rx = startReceiver();
        try {
          const ep = (await o.admin.post("/api/webhooks", { url: rx.url })).body;
          const old = (await o.admin.post(`/api/webhooks/${ep.id}/test`)).body;
          const recent = (await o.admin.post(`/api/webhooks/${ep.id}/test`)).body;
          await deliveriesOnce(o, ep.id, (l) => l.length === 2 && l.every((d) => d.status === "succeeded"), "both deliveries to succeed");
          const age = async (deliveryId: string, eventId: string, days: number) => {
            await db(server).execute(sql`update webhook_deliveries set created_at = now() - make_interval(days => ${days}) where id = ${deliveryId}`);
            await db(server).execute(sql`update webhook_events set created_at = now() - make_interval(days => ${days}) where id = ${eventId}`);
          };
          await age(old.deliveryId, old.eventId, 31);
          await age(recent.deliveryId, recent.eventId, 29);
          await pruneEvents(server.services.deps);
          const left = (await o.admin.get(`/api/webhooks/${ep.id}/deliveries`)).body.data.map((d: { id: string }) => d.id);
          expect(left).toEqual([recent.deliveryId]);
          const events = rowsOf<{ id: string }>(await db(server).execute(sql`select id from webhook_events where id in (${old.eventId}, ${recent.eventId})`));
          expect(events.map((e) => e.id)).toEqual([recent.eventId]);
        } finally {
          rx.stop();
        }
      },
    },
    {
      says: "and always to cloud metadata addresses (169.254.169.254, fd00:ec2::254, 100.100.100.200)",
      by: { file: "test/unit/outbound.test.ts", test: "allowing private addresses (development) still refuses cloud metadata and the unspecified address" },
    },
    {
      says: "A URL naming such an address is refused when it is created or changed (400)",
      by: { file: "test/integration/webhooks-refused.test.ts", test: "private, loopback, link-local and metadata literals are refused when the endpoint is created or changed" },
    },
    {
      says: "every call refused for want of a scope or outside the key's reach (403), reads included",
      by: { file: "test/integration/audit.test.ts", test: "an entry says who, what, which ids, from where and how it ended" },
    },
    {
      says: "Requests refused before a tool is chosen are not entries: a 401 is one",
      check: async (server) => {
        const o = await org(server);
        const expired = await o.keyClient(["read"]);
        await db(server).execute(sql`update api_keys set expires_at = now() - interval '1 minute' where id = ${expired.keyId}`);
        expect((await expired.get("/api/buckets")).status).toBe(401);
        expect((await server.api.withToken("f".repeat(64)).get("/api/buckets")).status).toBe(401);
        const reader = await o.keyClient(["read"]);
        expect((await reader.get("/api/audit")).status).toBe(403);
        const refused = (await o.admin.get("/api/audit?outcome=refused")).body.data;
        expect(refused.map((e: { action: string; status: number; actor: { apiKeyId: string } }) => [e.action, e.status, e.actor.apiKeyId])).toEqual([["audit_list", 403, reader.keyId]]);
      },
    },
    {
      says: "Entries older than `AUDIT_RETENTION_DAYS` (180) are deleted by maintenance.",
      by: { file: "test/integration/audit.test.ts", test: "entries past the retention are deleted by maintenance" },
      check: defaults({ AUDIT_RETENTION_DAYS: 180 }),
    },
    {
      says: "A deleted object stays restorable for 7 days (then the purge job removes it)",
      by: { file: "test/integration/trash.test.ts", test: "a restored object comes back with its tags, categories, thumbnail and set memberships" },
    },
    {
      says: "The quota is checked again: without room, 403 `quota_exceeded`.",
      by: { file: "test/integration/trash.test.ts", test: "the quota is checked again: no room, no restore" },
    },
    {
      says: "cannot be restored (409 `conflict`, `details.reason`: `key_in_use` with the live object's id, `key_reused` when the newer object was deleted too",
      by: { file: "test/integration/trash.test.ts", test: "a key used again since the delete: the newer upload's bytes won, the deleted object cannot come back" },
    },
    {
      says: "or `bytes_replaced` when bytes were put at the key without a confirm",
      by: { file: "test/integration/trash.test.ts", test: "bytes put at the key without a confirm replaced them too: 409" },
    },
  ],
  notPromises: [
    {
      says: "kept upload URLs at 150-380 ms in the worst 1%",
      why: "a measurement (bench/notes/2026-11-27-neighbours-sittings.md, tenth sitting) explaining the decision, not a bound the service keeps",
    },
  ],
};

export default claims;
