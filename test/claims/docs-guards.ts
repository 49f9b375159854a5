import { expect } from "bun:test";
import { CREDENTIAL_TTL_MS } from "../../app/credential-cache.ts";
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_RETENTION_MS } from "../../domain/guards/idempotency.ts";
import { gcra, gcraParams } from "../../domain/guards/rate-limit.ts";
import { MAX_STORED_RESPONSE_BYTES } from "../../http/guards/idempotency.ts";
import { MemoryIdempotencyStore } from "../../http/guards/stores/memory.ts";
import { capture, replay } from "../../http/guards/stored-response.ts";
import type { PageClaims } from "./claim.ts";
import { defaults, MiB } from "../support/claim-checks.ts";

const idem = "test/integration/idempotency.test.ts";
const idemUnit = "test/unit/idempotency.test.ts";
const rate = "test/integration/rate-limit.test.ts";

const claims: PageClaims = {
  page: "docs/guards.md",
  claims: [
    {
      says: "1. **authentication** (401 when the credential is missing or refused);",
      by: { file: "test/integration/auth.test.ts", test: "a well-formed secret that was never issued" },
    },
    {
      says: "2. **rate limit** per credential, then per organization (429 when exceeded);",
      by: { file: "test/integration/org-rate-limit.test.ts", test: "an organization over its cap is refused on every key, REST and MCP, while another organization is served" },
    },
    {
      says: "3. **Idempotency-Key** (replay, or 409 while the same key is still running);",
      by: { file: idem, test: "50 at once create exactly one bucket; the others replay it or are told it is in flight" },
    },
    {
      says: "its status, body and representation headers are kept for **24 hours**",
      by: { file: idem, test: "replayed just before 24 h, executed afresh after" },
      check: async () => expect(IDEMPOTENCY_RETENTION_MS).toBe(24 * 3_600_000),
    },
    {
      says: "`409 idempotency_in_flight` with `Retry-After: 1`, instead of running a second time. Fifty simultaneous retries create one resource.",
      by: { file: idem, test: "50 at once create exactly one bucket; the others replay it or are told it is in flight" },
    },
    {
      says: "After 24 hours the key is forgotten; the same key then runs a new request.",
      by: { file: idem, test: "replayed just before 24 h, executed afresh after" },
    },
    {
      says: "| key format | any string of 1 to 255 characters; empty or longer is `400 bad_request` |",
      by: { file: idem, test: "an empty or over-long key is a 400" },
    },
    {
      says: "| what is replayed | status, body bytes, and the headers that describe the representation (`Content-Type`, `Location`, `Content-Disposition`, `Content-Language`, `Content-Encoding`, `Cache-Control`, `ETag`, `Last-Modified`); not `X-Request-Id` or the rate limit fields, which are per request |",
      by: { file: idem, test: "a replay has its own X-Request-Id and fresh rate limit fields" },
      check: async () => {
        const kept = {
          "content-type": "application/json",
          location: "/api/buckets/x",
          "content-disposition": "inline",
          "content-language": "en",
          "content-encoding": "identity",
          "cache-control": "no-store",
          etag: '"v1"',
          "last-modified": "Wed, 21 Oct 2026 07:28:00 GMT",
        };
        const perRequest = { "x-request-id": "r1", ratelimit: '"default";r=1;t=1', "ratelimit-policy": '"default";q=300;w=60' };
        const { stored } = await capture(new Response("{}", { status: 201, headers: { ...kept, ...perRequest } }), 1024);
        const again = replay(stored!);
        expect(Object.fromEntries([...again.headers].filter(([n]) => n !== "idempotency-replayed"))).toEqual(kept);
        expect(await again.text()).toBe("{}");
      },
    },
    {
      says: "| non-JSON answers | bodies are kept as bytes whatever their type, so a `201` with a `Location`, a binary body or an empty `204` replay exactly |",
      by: { file: idemUnit, test: "JSON and binary bodies replay byte for byte" },
      check: async () => {
        const { stored } = await capture(new Response(null, { status: 204 }), 1024);
        const again = replay(stored!);
        expect(again.status).toBe(204);
        expect(await again.text()).toBe("");
      },
    },
    {
      says: "| large answers | a body over 1 MiB is sent but not kept (and the key is released).",
      by: { file: idemUnit, test: "a body over the limit is not stored but is still sent whole" },
      check: async () => {
        expect(MAX_STORED_RESPONSE_BYTES).toBe(MiB);
        const over = await capture(new Response("x".repeat(MiB + 1), { status: 200 }), MAX_STORED_RESPONSE_BYTES);
        expect(over.stored).toBeNull();
        expect((await over.response.text()).length).toBe(MiB + 1);
        expect((await capture(new Response("x".repeat(MiB), { status: 200 }), MAX_STORED_RESPONSE_BYTES)).stored).not.toBeNull();
      },
    },
    {
      says: "| a request that never finishes | the key is held for at most 60 s (`IDEMPOTENCY_LEASE_MS`); after that a retry may run.",
      by: { file: idem, test: "a request that outlives its lease can be taken over" },
      check: async () => expect(IDEMPOTENCY_LEASE_MS).toBe(60_000),
    },
    {
      says: "is encrypted with AES-256-GCM under a key derived from the client's Idempotency-Key, which the store never sees (it holds only a SHA-256 of the request's scope)",
      by: { file: idemUnit, test: "seal and unseal round-trip; another scope's key cannot open it" },
    },
    {
      says: "(it holds only a SHA-256 of the request's scope)",
      by: { file: idemUnit, test: "stable, and a digest that reveals neither key nor URL" },
    },
    {
      says: "the claim travels in the same Lua script as the rate limit's count (claimed only if the request is allowed)",
      by: { file: "test/integration/guard-stores.test.ts", test: "takeAll: counts, then claims only what it admits" },
    },
    {
      says: "across instances a retry that beats the write by a fraction of a millisecond gets `409 idempotency_in_flight`, never a second run",
      by: { file: "test/integration/guards-shared.test.ts", test: "concurrent requests with one key across both create one bucket" },
    },
    {
      says: "| in-process store | bounded to 64 MiB of kept responses; past that the oldest are forgotten early |",
      by: { file: idemUnit, test: "bounded in bytes: the oldest responses go first" },
      check: async () => expect((new MemoryIdempotencyStore() as unknown as { maxBytes: number }).maxBytes).toBe(64 * MiB),
    },
    {
      says: "`RATE_LIMIT_PER_MINUTE` (default **300**) requests per minute **per credential**",
      by: { file: rate, test: "RATE_LIMIT_PER_MINUTE defaults to 300" },
    },
    {
      says: "an API key, or a JWT user. Every tool route counts, whatever its status, and so does every `POST /mcp`",
      by: { file: rate, test: "every POST to /mcp counts against the credential's bucket, shared with REST" },
    },
    {
      says: "credential's bucket holds `q` requests and refills continuously at `q` per 60 s: one every 200 ms at the default. A client that has been idle can send 300 requests at once, then one per 200 ms.",
      by: { file: "test/unit/rate-limit.test.ts", test: "a refusal says when one unit comes back (window/limit) and when all are back (the window)" },
    },
    {
      says: "(the log keeps one entry per request: 300 per active key)",
      by: { file: "test/unit/rate-limit.test.ts", test: "a fresh bucket allows `limit` at once, counting remaining down to 0, then refuses" },
    },
    {
      says: "over any sliding 60 s a client can get up to `2q - 1` requests (a full bucket, then a full refill); sustained, it gets `q` per minute.",
      check: async () => {
        // A client sending as fast as it is let, from an idle start: count what gets through in the first 60 s.
        const q = 300;
        const p = gcraParams({ limit: q, windowMs: 60_000 });
        let tat: number | null = null;
        const granted: number[] = [];
        for (let now = 0; now < 180_000_000; now += 10_000) {
          for (;;) {
            const d = gcra(tat, now, p);
            if (!d.allowed) break;
            tat = d.tatUs;
            granted.push(now);
          }
        }
        const within = (from: number) => granted.filter((t) => t >= from && t < from + 60_000_000).length;
        expect(within(0)).toBe(2 * q - 1);
        expect(Math.max(...[0, 30_000_000, 60_000_000, 90_000_000].map(within))).toBe(2 * q - 1);
        expect(within(120_000_000)).toBe(q);
      },
    },
    {
      says: "Every counted response, success or error, carries the fields of the IETF draft `draft-ietf-httpapi-ratelimit-headers`",
      by: { file: rate, test: "errors count and carry the fields too; POST, DELETE and GET share one bucket" },
    },
    {
      says: "So do the routes that take no credential: `GET /api/openapi.json`, `/api/docs`, the console's page and files (`/console/...`), the RFC 9728 metadata under `/.well-known/`, signed render URLs and unknown `/api/...` paths.",
      check: async (server) => {
        for (const path of ["/api/openapi.json", "/api/docs", "/console", "/console/buckets", "/.well-known/oauth-protected-resource/mcp", `/api/render/${crypto.randomUUID()}?width=10&expires=1&signature=x`, "/api/no-such-route"]) {
          const res = await fetch(`${server.url}${path}`);
          await res.arrayBuffer();
          expect({ path, state: res.headers.get("ratelimit") }).toEqual({ path, state: expect.stringMatching(/^"default";r=\d+;t=\d+$/) });
        }
      },
    },
    {
      says: "Valid credentials are never refused because of their address's bucket. `/healthz` is not limited.",
      by: { file: rate, test: "refused credentials are limited per address; valid credentials from it are not" },
    },
    {
      says: "`/healthz`, `/readyz` and `/` (the redirect to the console) are not counted and carry none.",
      check: async (server) => {
        for (const path of ["/healthz", "/readyz", "/"]) {
          const res = await fetch(`${server.url}${path}`, { redirect: "manual" });
          await res.arrayBuffer();
          expect({ path, policy: res.headers.get("ratelimit-policy"), state: res.headers.get("ratelimit") }).toEqual({ path, policy: null, state: null });
        }
      },
    },
    {
      says: "A refused request gets `429` with code `rate_limited`, `Retry-After: <seconds until one request is allowed>` (at least 1), and `RateLimit: \"default\";r=0;t=60` (or less).",
      by: { file: rate, test: "requests pass, counting down; the next is 429 with Retry-After" },
    },
    {
      says: "`ORG_RATE_LIMIT_PER_MINUTE` (default 4 × `RATE_LIMIT_PER_MINUTE`: 1200)",
      by: { file: "test/integration/org-rate-limit.test.ts", test: "ORG_RATE_LIMIT_PER_MINUTE defaults to four times RATE_LIMIT_PER_MINUTE" },
    },
    {
      says: "request the organization refuses gets the same `429 rate_limited` with `Retry-After`, and its fields name the organization's policy",
      by: { file: "test/integration/org-rate-limit.test.ts", test: "an organization over its cap is refused on every key, REST and MCP, while another organization is served" },
    },
    {
      says: "A keyed request the organization refuses claims no `Idempotency-Key`, so its retry runs.",
      by: { file: "test/integration/org-rate-limit.test.ts", test: "a keyed request the organization refuses leaves its Idempotency-Key unclaimed: the retry runs" },
    },
    {
      says: "Both counts and the claim are one Lua script (one atomic step, one round trip to the store), stopping at the first bucket that refuses.",
      by: { file: "test/integration/guard-stores.test.ts", test: "takeAll over two buckets: each counted in order; a refusal spends none after it and claims nothing" },
    },
    {
      says: "full-text searches (default 3, of the 5 connections PostgreSQL searches have per server) and `ORG_MAX_RENDERS` on-the-fly renders (default 2; a render served from the cache takes no slot) at once.",
      by: { file: "test/integration/statement-timeout.test.ts", test: "the search pool holds 5 connections and the main pool 10" },
      check: defaults({ ORG_MAX_SEARCHES: 3, ORG_MAX_RENDERS: 2 }),
    },
    {
      says: "up to `ORG_CONCURRENCY_WAIT_MS` (default 1 s) for a slot, then answer `429 rate_limited` with `Retry-After: 1` and a message naming the work.",
      by: { file: "test/integration/org-concurrency.test.ts", test: "an organization running its searches' share is refused with 429 after a short wait; another organization is served" },
      check: defaults({ ORG_CONCURRENCY_WAIT_MS: 1000 }),
    },
    {
      says: "`ORG_SEARCH_MS_PER_SECOND` (default 250) milliseconds of search per second of real time, of which a quiet organization may spend `ORG_SEARCH_BURST_MS` (2500) at once.",
      by: { file: "test/unit/org-budget.test.ts", test: "work within the burst runs at once; an organization that overdrew is refused with Retry-After, another is served" },
      check: defaults({ ORG_SEARCH_MS_PER_SECOND: 250, ORG_SEARCH_BURST_MS: 2500 }),
    },
    {
      says: "else gets `429 rate_limited` with `Retry-After` in whole seconds of debt and a message naming the budget.",
      by: { file: "test/unit/org-budget.test.ts", test: "an organization whose debt clears within the wait waits, then runs" },
    },
    {
      says: "`ORG_RENDER_MS_PER_SECOND` (default 500) milliseconds of rendering per second, `ORG_RENDER_BURST_MS` (5000) at once",
      by: { file: "test/integration/render-budget.test.ts", test: "the budget is on by default, and 0 turns it off" },
      check: defaults({ ORG_RENDER_MS_PER_SECOND: 500, ORG_RENDER_BURST_MS: 5000 }),
    },
    {
      says: "`SEARCH_STATEMENT_TIMEOUT_MS` (2 s) and any other after `DB_STATEMENT_TIMEOUT_MS` (5 s), answering `503 unavailable`",
      by: { file: "test/integration/statement-timeout.test.ts", test: "the defaults: 5 s for every statement, 2 s for a search" },
    },
    {
      says: "answering `503 unavailable`; and a query is bounded in size",
      by: { file: "test/integration/statement-timeout.test.ts", test: "a request whose statement waits past DB_STATEMENT_TIMEOUT_MS answers 503 unavailable promptly, then recovers" },
    },
    {
      says: "(a command on a hung Redis gives up after 500 ms)",
      by: { file: "test/integration/guards-fail-open.test.ts", test: "a hung Redis: commands give up after 500 ms and requests are served without the guards" },
    },
    {
      says: "Responses then carry `RateLimit-Policy` but no `RateLimit` (the remaining count would be a guess).",
      by: { file: "test/integration/guards-fail-open.test.ts", test: "requests succeed, quickly, and the limit is not enforced" },
    },
    {
      says: "Keys that authenticate are now remembered in the process for at most 10 s.",
      by: { file: "test/unit/credential-cache.test.ts", test: "entries expire after the TTL" },
      check: async () => expect(CREDENTIAL_TTL_MS).toBe(10_000),
    },
    {
      says: "Rotating or deleting a key, or deleting the bucket a key is restricted to (which deletes the key), drops it at once on every instance",
      by: { file: "test/integration/credential-cache.test.ts", test: "a key rotated, deleted or bucket-deleted on one instance stops working on the other at once" },
    },
    {
      says: "which the 10 s lifetime bounds",
      by: { file: "test/unit/credential-cache.test.ts", test: "entries expire after the TTL" },
    },
  ],
  notPromises: [
    {
      says: "An everyday search (5-30 ms) never meets it",
      why: "what an everyday search costs, measured (bench/notes/2026-11-27-neighbours-sittings.md); the budget itself is backed above",
    },
  ],
};

export default claims;
