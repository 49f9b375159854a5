import { expect } from "bun:test";
import { sql } from "drizzle-orm";
import { loadConfig } from "../../app/config.ts";
import { DEFAULT_PLANS, GB } from "../../domain/billing/plans.ts";
import type { Logger } from "../../domain/ports/log.ts";
import type { PageClaims } from "./claim.ts";
import { bodyField, bootstrapKey, DAY_MS, defaults, GiB, MiB, openapi, org, parameter, parameters, refused, reservationLifetimes, withServer } from "../support/claim-checks.ts";
import { newBucket } from "../support/objects.ts";
import { signJwt } from "../support/server.ts";
import { upload } from "../support/upload.ts";

const UPLOADS = "test/integration/uploads.test.ts";
const BOUND = "test/integration/upload-size-bound.test.ts";
const ATTACK = "test/hardening/attack-run-a.test.ts";
const UNCONFIRMED = "test/integration/unconfirmed-bound.test.ts";
const ERRORS = "test/integration/http-errors.test.ts";
const CODES = { file: "test/contract/error-codes-documented.test.ts", test: "docs/conventions.md lists every error code with its status, and no other" };
const IDEM = "test/integration/idempotency.test.ts";
const RATE = "test/integration/rate-limit.test.ts";
const ORGANIZING = "test/claims/docs-organizing.ts";

/** A row of the error table: the table as a whole is the contract test's; `by` adds the behaviour's own test where one exists. */
const row = (says: string, by?: { file: string; test: string }) => ({ says, by: by ?? CODES });

const claims: PageClaims = {
  page: "docs/conventions.md",
  claims: [
    // Environment: each row's default is what app/config.ts falls back to.
    { says: "| `PORT`, `HOST` | `3000`, `127.0.0.1` |", check: defaults({ PORT: 3000, HOST: "127.0.0.1" }) },
    {
      says: "| `DB_STATEMENT_TIMEOUT_MS`, `SEARCH_STATEMENT_TIMEOUT_MS` | `5000`, `2000` |",
      by: { file: "test/integration/statement-timeout.test.ts", test: "the defaults: 5 s for every statement, 2 s for a search" },
      check: defaults({ DB_STATEMENT_TIMEOUT_MS: 5000, SEARCH_STATEMENT_TIMEOUT_MS: 2000 }),
    },
    {
      says: "(searches have a pool of their own, 5 connections per server, beside the main pool's 10)",
      by: { file: "test/integration/statement-timeout.test.ts", test: "the search pool holds 5 connections and the main pool 10" },
    },
    {
      says: "past it the request answers 503 `unavailable`.",
      by: { file: "test/integration/statement-timeout.test.ts", test: "a request whose statement waits past DB_STATEMENT_TIMEOUT_MS answers 503 unavailable promptly, then recovers" },
    },
    { says: "| `REDIS_URL`, `REDIS_PREFIX` | unset, `media` |", check: defaults({ REDIS_URL: null, REDIS_PREFIX: "media" }) },
    { says: "| `QUEUE_REDIS_URL` | unset: `REDIS_URL` |", by: { file: "test/integration/queue-redis.test.ts", test: "defaults to REDIS_URL; set, it needs REDIS_URL beside it" } },
    { says: "| `DATABASE_READ_URL` | unset |", check: defaults({ DATABASE_READ_URL: [] }, { DATABASE_URL: "postgres://db/media" }) },
    { says: "| `DB_READ_MAX_LAG_MS` | `1000` |", check: defaults({ DB_READ_MAX_LAG_MS: 1000 }) },
    {
      says: "a replica further behind the primary serves no reads, and an organization's reads stay on the primary this long after it writes",
      by: { file: "test/integration/read-replicas.test.ts", test: "a replica further behind than DB_READ_MAX_LAG_MS serves nothing" },
    },
    {
      says: "| `WORKER_CONCURRENCY`, `WORKER_ATTEMPTS`, `WORKER_BACKOFF_MS` | `2`, `3`, `2000` |",
      check: defaults({ WORKER_CONCURRENCY: 2, WORKER_ATTEMPTS: 3, WORKER_BACKOFF_MS: 2000 }),
    },
    { says: "| `WORKER_IO_CONCURRENCY` | `16` |", check: defaults({ WORKER_IO_CONCURRENCY: 16 }) },
    { says: "| `WORKER_LOCK_MS`, `WORKER_STALLED_INTERVAL_MS` | `30000`, `30000` |", check: defaults({ WORKER_LOCK_MS: 30_000, WORKER_STALLED_INTERVAL_MS: 30_000 }) },
    {
      says: "| `WORKER_TOOL_TIMEOUT_MS`, `WORKER_MAX_INPUT_BYTES`, `WORKER_MAX_PIXELS` | `120000`, 2 GiB, 200 MP |",
      check: defaults({ WORKER_TOOL_TIMEOUT_MS: 120_000, WORKER_MAX_INPUT_BYTES: 2 * GiB, WORKER_MAX_PIXELS: 200_000_000 }),
    },
    { says: "| `WORKER_NICE` | `10` | niceness (0..19)", check: async () => {
      await defaults({ WORKER_NICE: 10 })();
      await refused("WORKER_NICE", "20", "-1")();
    } },
    { says: "| `WORKER_SCHED_IDLE` | `true` |", check: defaults({ WORKER_SCHED_IDLE: true }) },
    {
      says: "| `RENDER_MAX_DIMENSION`, `RENDER_MAX_PIXELS`, `RENDER_MAX_SOURCE_BYTES` | `4096`, 100 MP, 32 MiB |",
      check: defaults({ RENDER_MAX_DIMENSION: 4096, RENDER_MAX_PIXELS: 100_000_000, RENDER_MAX_SOURCE_BYTES: 32 * MiB }),
    },
    { says: "| `RENDER_CACHE_BYTES`, `RENDER_URL_MAX_SECONDS` | 1 GiB, 30 days |", check: defaults({ RENDER_CACHE_BYTES: GiB, RENDER_URL_MAX_SECONDS: 30 * 86_400 }) },
    {
      says: "| `S3_ENDPOINT`, `S3_REGION`, `S3_BUCKET`, `S3_ACCESS_KEY_ID`, `S3_SECRET_ACCESS_KEY` | unset, `us-east-1`, `media` |",
      check: defaults({ S3_ENDPOINT: null, S3_REGION: "us-east-1", S3_BUCKET: "media" }),
    },
    { says: "| `S3_FORCE_PATH_STYLE` | `true` |", check: defaults({ S3_FORCE_PATH_STYLE: true }) },
    {
      says: "| `S3_TIMEOUT_MS` | `10000` | Longest a storage operation waits for its answer, its retries included (a quick failure is tried again while time is left; a store that does not answer gets one request), and the longest wait for the next byte of a transfer; an operation that waits longer fails with 503 `unavailable` |",
      by: { file: "test/integration/storage-deadline.test.ts", test: "each operation on a store that never answers sends one request and fails at S3_TIMEOUT_MS as a timeout" },
      check: defaults({ S3_TIMEOUT_MS: 10_000 }),
    },
    {
      says: "a quick failure is tried again while time is left;",
      by: { file: "test/integration/storage-deadline.test.ts", test: "a store that answers 503 twice is tried again within the deadline" },
    },
    {
      says: "an operation that waits longer fails with 503 `unavailable` |",
      by: { file: "test/integration/storage-deadline.test.ts", test: "a confirm against a store that stops answering sends it one request and answers 503 unavailable" },
    },
    { says: "| `STORAGE_PORT` | `9000` |", check: defaults({ STORAGE_PORT: 9000 }) },
    {
      says: "| `UPLOAD_URL_EXPIRES_IN` | `900` | lifetime of upload URLs in seconds (60..604800) |",
      check: async () => {
        await defaults({ UPLOAD_URL_EXPIRES_IN: 900 })();
        await refused("UPLOAD_URL_EXPIRES_IN", "59", "604801")();
      },
    },
    {
      says: "| `UPLOAD_UNSIZED_MAX_BYTES` | 64 MiB | the most an upload URL without a `size`, or a multipart part URL, may carry: what it counts as unconfirmed, and the maximum the embedded node signs (1 byte..5 GiB; see **Quota**) |",
      by: { file: UNCONFIRMED, test: "the finding: ten URLs without a size on a 100 KB allocation" },
      check: async () => {
        await defaults({ UPLOAD_UNSIZED_MAX_BYTES: 64 * MiB })();
        await refused("UPLOAD_UNSIZED_MAX_BYTES", "0", String(5 * GiB + 1))();
        expect(loadConfig({ UPLOAD_UNSIZED_MAX_BYTES: String(5 * GiB) }).uploadUnsizedMaxBytes).toBe(5 * GiB);
      },
    },
    { says: "| `SEARCH_EXACT_LIMIT` | `10000` |", check: defaults({ SEARCH_EXACT_LIMIT: 10_000 }) },
    {
      says: "| `JWT_SECRET` | unset: JWT bearer disabled | HS256 secret for dashboard-issued JWTs (at least 16 characters) |",
      by: { file: "test/integration/auth.test.ts", test: "JWTs are refused when JWT_SECRET is not configured" },
      check: async () => {
        await defaults({ JWT_SECRET: null })();
        await refused("JWT_SECRET", "fifteen-chars!!".slice(0, 15))();
      },
    },
    {
      says: "| `INITIAL_ADMIN_KEY` | unset: random, printed once | the bootstrap admin secret (64 hex characters), used only on an empty database |",
      by: { file: "test/e2e/start.test.ts", test: "first start creates the Default organization and prints the admin secret once; data survives a restart" },
    },
    {
      says: "| `RATE_LIMIT_PER_MINUTE` | `300` | requests per minute per credential |",
      by: { file: RATE, test: "RATE_LIMIT_PER_MINUTE defaults to 300" },
    },
    {
      says: "| `ORG_MAX_SEARCHES`, `ORG_MAX_RENDERS`, `ORG_CONCURRENCY_WAIT_MS` | `3`, `2`, `1000` |",
      check: defaults({ ORG_MAX_SEARCHES: 3, ORG_MAX_RENDERS: 2, ORG_CONCURRENCY_WAIT_MS: 1000 }),
    },
    {
      says: "more wait this long for a slot, then answer 429 `rate_limited` with `Retry-After: 1`",
      by: { file: "test/integration/org-concurrency.test.ts", test: "an organization running its searches' share is refused with 429 after a short wait; another organization is served" },
    },
    {
      says: "| `ORG_SEARCH_MS_PER_SECOND`, `ORG_SEARCH_BURST_MS` | `250`, `2500` |",
      check: async () => {
        await defaults({ ORG_SEARCH_MS_PER_SECOND: 250, ORG_SEARCH_BURST_MS: 2500 })();
        expect(loadConfig({ ORG_SEARCH_MS_PER_SECOND: "0" }).orgConcurrency.searchBudget).toBeNull();
      },
    },
    {
      says: "over it a search waits for the refill (within `ORG_CONCURRENCY_WAIT_MS`) or answers 429 with `Retry-After`",
      by: { file: "test/unit/org-budget.test.ts", test: "an organization whose debt clears within the wait waits, then runs" },
    },
    {
      says: "| `ORG_RENDER_MS_PER_SECOND`, `ORG_RENDER_BURST_MS` | `500`, `5000` |",
      by: { file: "test/integration/render-budget.test.ts", test: "the budget is on by default, and 0 turns it off" },
      check: defaults({ ORG_RENDER_MS_PER_SECOND: 500, ORG_RENDER_BURST_MS: 5000 }),
    },
    {
      says: "| `ORG_RATE_LIMIT_PER_MINUTE` | 4 × `RATE_LIMIT_PER_MINUTE` |",
      by: { file: "test/integration/org-rate-limit.test.ts", test: "ORG_RATE_LIMIT_PER_MINUTE defaults to four times RATE_LIMIT_PER_MINUTE" },
    },
    { says: "| `MAX_BODY_BYTES` | `1048576` | largest accepted JSON request body |", by: { file: ERRORS, test: "oversized bodies are 413" }, check: defaults({ MAX_BODY_BYTES: MiB }) },
    {
      says: "| `STRIPE_SECRET_KEY`, `STRIPE_WEBHOOK_SECRET` | unset: invoices and portal answer 501 |",
      by: { file: "test/integration/billing.test.ts", test: "invoices and portal answer 501 not_configured" },
    },
    {
      says: "| `PLANS` | free 5 GiB, pro, business |",
      check: async () => {
        expect(DEFAULT_PLANS.map((p) => p.key)).toEqual(["free", "pro", "business"]);
        expect(DEFAULT_PLANS[0]!.includedStorage).toBe(5 * GB);
        expect(GB).toBe(GiB);
      },
    },
    {
      says: "| `WEBHOOK_TIMEOUT_MS`, `WEBHOOK_ATTEMPTS`, `WEBHOOK_BACKOFF_MS` | `10000`, `13`, `60000` |",
      check: defaults({ WEBHOOK_TIMEOUT_MS: 10_000, WEBHOOK_ATTEMPTS: 13, WEBHOOK_BACKOFF_MS: 60_000 }),
    },
    { says: "| `WEBHOOK_ALLOW_PRIVATE` | `false` |", check: defaults({ WEBHOOK_ALLOW_PRIVATE: false }) },
    {
      says: "| `IMPORT_ALLOW_PRIVATE`, `IMPORT_MAX_BYTES`, `IMPORT_TIMEOUT_MS`, `IMPORT_MAX_REDIRECTS` | `false`, 1 GiB, `300000`, `5` |",
      check: defaults({ IMPORT_ALLOW_PRIVATE: false, IMPORT_MAX_BYTES: GiB, IMPORT_TIMEOUT_MS: 300_000, IMPORT_MAX_REDIRECTS: 5 }),
    },
    {
      says: "| `IMPORT_MIN_RATE_BYTES`, `IMPORT_MIN_RATE_WINDOW_MS` | 32 KiB, `30000` |",
      check: defaults({ IMPORT_MIN_RATE_BYTES: 32 * 1024, IMPORT_MIN_RATE_WINDOW_MS: 30_000 }),
    },
    { says: "`0` bytes: no floor", by: { file: "test/unit/url-fetcher-rate.test.ts", test: "a floor of 0 bytes is none" } },
    {
      says: "| `AUDIT_RETENTION_DAYS` | `180` | audit log entries older than this are deleted |",
      by: { file: "test/integration/audit.test.ts", test: "entries past the retention are deleted by maintenance" },
      check: defaults({ AUDIT_RETENTION_DAYS: 180 }),
    },
    { says: "| `LOG_LEVEL` | `info` |", check: defaults({ LOG_LEVEL: "info" }) },
    {
      says: "| `METRICS_TOKEN` | unset: no `/metrics` on the main port | serve `/metrics` on the main port to requests bearing this token (at least 16 characters) |",
      by: { file: "test/integration/metrics.test.ts", test: "is refused without the token on the main port, and served without one on METRICS_PORT" },
      check: async (server) => {
        await defaults({ METRICS_TOKEN: null })();
        await refused("METRICS_TOKEN", "x".repeat(15))();
        const res = await fetch(`${server.url}/metrics`);
        await res.arrayBuffer();
        expect(res.status).toBe(404);
      },
    },
    { says: "| `READY_TIMEOUT_MS` | `2000` |", check: defaults({ READY_TIMEOUT_MS: 2000 }) },
    { says: "| `SHUTDOWN_TIMEOUT_MS` | `25000` |", check: defaults({ SHUTDOWN_TIMEOUT_MS: 25_000 }) },

    // The bootstrap key and credentials.
    {
      says: 'an API key named "Initial admin key" with scope `admin`, valid for 365 days.',
      check: async () => {
        const key = await bootstrapKey();
        expect(key).toEqual({ lifetimeMs: 365 * DAY_MS, scopes: ["admin"], name: "Initial admin key" });
      },
    },
    {
      says: "Its secret is `INITIAL_ADMIN_KEY` when set (64 lowercase hex characters)",
      by: { file: "test/e2e/start.test.ts", test: "INITIAL_ADMIN_KEY becomes the admin secret on a fresh data directory" },
      check: refused("INITIAL_ADMIN_KEY", "AB".repeat(32), "ab".repeat(31)),
    },
    {
      says: "it is never accepted as a bearer. Secrets are stored as SHA-256 hashes",
      by: { file: "test/hardening/secrets.test.ts", test: "a key's secret is stored only as its SHA-256; lists and lookups never show it" },
    },
    {
      says: "(`expiresInDays`, default 90, at most 365)",
      by: { file: "test/integration/api-keys.test.ts", test: "expiresInDays bounds: 1 and 365 accepted; 0, 366 and fractions refused" },
    },
    {
      says: "has its `expiresAt` capped at that credential's, and the answer's `note` says so",
      by: { file: ATTACK, test: "a 1-day admin key asking for 365 days gets a key capped at its own expiry, and the note says so" },
    },
    {
      says: "optionally `email` (at most 320 characters) and `org_name` (1..200).",
      check: async (server) => {
        const who = async (claims: { email?: string; org_name?: string }) =>
          (await server.api.withToken(await signJwt({ sub: crypto.randomUUID(), org_id: crypto.randomUUID(), ...claims })).get("/api/me")).status;
        const email = (n: number) => `${"a".repeat(n - "@example.test".length)}@example.test`;
        expect(await who({ email: email(320) })).toBe(200);
        expect(await who({ email: email(321) })).toBe(401);
        expect(await who({ org_name: "o".repeat(200) })).toBe(200);
        expect(await who({ org_name: "o".repeat(201) })).toBe(401);
        expect(await who({ org_name: "" })).toBe(401);
      },
    },
    {
      says: "request carries `Content-Digest`, `Signature-Input` and `Signature`",
      by: { file: "test/integration/signed-requests.test.ts", test: "a signed request acts in the credential's organization, as the credential" },
    },
    {
      says: "A signature is refused when it is more than 5 minutes from the service's clock",
      by: { file: "test/integration/signed-requests.test.ts", test: "a signature made more than five minutes away from the service's clock, either way" },
    },
    {
      says: "A missing, malformed, unknown, expired or rotated-out credential, or a refused signature, is `401 unauthorized`.",
      by: { file: "test/integration/auth.test.ts", test: "rotated-out secret" },
    },
    {
      says: "The organization a request acts in always comes from the credential, never from its input.",
      by: { file: "test/hardening/tenancy.test.ts", test: "the table has an entry for every registry tool and nothing else" },
    },
    {
      says: "Every 401 carries `WWW-Authenticate: Bearer` with `resource_metadata` pointing at the RFC 9728 document under `/.well-known/oauth-protected-resource`",
      by: { file: "test/e2e/mcp.test.ts", test: "a 401 says 'Bearer' and points at the protected-resource metadata (RFC 6750, RFC 9728)" },
    },
    {
      says: "so a tool a caller may not use is neither listed nor run (403 `forbidden` when called anyway).",
      by: { file: "test/hardening/scopes.test.ts", test: "MCP tools/list shows exactly the tools each key may use (the table's scope and reach)" },
    },
    {
      says: "their ids answer 404 `not_found`, never 403.",
      by: { file: "test/hardening/tenancy.test.ts", test: "B cannot see or touch A" },
    },

    // Requests and answers.
    {
      says: "**Lists** answer `{ data, total, hasMore }` and take `limit` (default 50, at most 200; invoices, which the payment provider pages: default 20, at most 100) and `offset` (default 0). The category tree is answered whole (`hasMore` is always false).",
      check: async (server) => {
        const doc = await openapi(server);
        for (const path of ["/api/buckets", "/api/media", "/api/tags", "/api/trash", "/api/audit"]) {
          expect({ path, ...parameter(doc, `GET ${path}`, "limit") }).toMatchObject({ path, default: 50, minimum: 1, maximum: 200 });
        }
        expect(parameter(doc, "GET /api/billing/invoices", "limit")).toMatchObject({ default: 20, maximum: 100 });
        expect(parameter(doc, "GET /api/buckets", "offset")).toMatchObject({ default: 0, minimum: 0 });
        const o = await org(server);
        for (let i = 0; i < 3; i++) await o.admin.post("/api/categories", { name: `tree-${i}` });
        const tree = await o.admin.get("/api/categories");
        expect([tree.status, tree.body.data.length, tree.body.hasMore]).toEqual([200, 3, false]);
      },
    },
    {
      says: "each operation lists the error codes it can answer (`x-error-codes` per status) and, for writes, the `Idempotency-Key` header.",
      check: async (server) => {
        const doc = await openapi(server);
        expect(doc.paths["/api/buckets"].post.responses["409"]["x-error-codes"]).toContain("conflict");
        for (const [path, ops] of Object.entries<Record<string, unknown>>(doc.paths)) {
          for (const method of Object.keys(ops)) {
            if (path === "/api/payments/webhook") continue;
            const takesKey = parameters(doc, `${method} ${path}`).some((p) => p.name === "Idempotency-Key");
            expect({ op: `${method} ${path}`, takesKey }).toEqual({ op: `${method} ${path}`, takesKey: method !== "get" });
          }
        }
      },
    },
    {
      says: "`openapi-typescript` and Redocly's recommended rules run on it in the test suite",
      by: { file: "test/contract/openapi-tools.test.ts", test: "Redocly's recommended rules: no error, no warning the config does not justify" },
    },
    {
      says: "Every answer outside 2xx carries one envelope, and the same request id as the `X-Request-Id` header",
      by: { file: ERRORS, test: "unknown routes are 404" },
    },
    {
      says: "for `validation_error` it is a list of `{ path, message }` (at most 50 entries, then one saying how many more)",
      by: { file: "test/hardening/fuzz-regressions.test.ts", test: "thousands of bad entries or unknown keys give a bounded list of details" },
    },
    row("| 400 | `validation_error` | the input fails its schema or a rule |", { file: ERRORS, test: "validation errors list path and message; unknown fields are refused" }),
    row("| 400 | `bad_request` | the request cannot be processed as sent (malformed JSON, a bad `Idempotency-Key`) |", { file: ERRORS, test: "malformed JSON is 400" }),
    row("| 401 | `unauthorized` | missing, malformed, unknown, expired or rotated-out credential |", { file: "test/integration/auth.test.ts", test: "expired key" }),
    row("| 403 | `forbidden` | a scope is missing, or the thing is outside the key's bucket or reach |", { file: "test/hardening/scopes.test.ts", test: "allowed exactly per scope, 403 and no change otherwise" }),
    row("| 403 | `quota_exceeded` | an upload reservation would pass the allocated storage, or the bytes not confirmed yet their bound (`details` has the numbers) |", { file: UPLOADS, test: "a reservation beyond the allocation is 403 quota_exceeded" }),
    row("| 404 | `not_found` | no such thing in the caller's organization (also for other organizations' ids) |", { file: "test/integration/buckets.test.ts", test: "get by id; another organization's bucket is 404" }),
    row("| 404 | `thumbnail_pending`, `thumbnail_unavailable` | the thumbnail (or the picture a render is cut from) is being made, or there is none |", { file: "test/integration/derivatives.test.ts", test: "right after confirm the thumbnail is pending: thumbnail_pending, then ready" }),
    row("| 405 | `method_not_allowed` | the path exists, but not for this method; `Allow` lists the methods it takes |", { file: ERRORS, test: "a path that exists under other methods is 405 with Allow, not 404" }),
    row("| 409 | `conflict` | the state forbids it: a non-empty bucket, a downgrade below usage, a taken tag slug |", { file: "test/integration/buckets.test.ts", test: "deleting a bucket that holds live objects is 409; soft-deleted objects do not count" }),
    row("| 409 | `idempotency_in_flight` | a request with the same `Idempotency-Key` is still running |", { file: IDEM, test: "50 at once create exactly one bucket; the others replay it or are told it is in flight" }),
    row("| 413 | `payload_too_large` | the body is over `MAX_BODY_BYTES` |", { file: ERRORS, test: "oversized bodies are 413" }),
    row("| 431 | `request_header_fields_too_large` | the request line (path and query) and headers together are over 16 KiB |", { file: ATTACK, test: "a 64 KiB query string is 431 with the error envelope" }),
    row("| 429 | `rate_limited` | over the rate limit; see `Retry-After` |", { file: RATE, test: "requests pass, counting down; the next is 429 with Retry-After" }),
    {
      says: "| 500 | `internal_error` | an unexpected failure (its cause is logged, never sent) |",
      by: CODES,
      check: async () => {
        const logged: { msg: string; fields?: Record<string, unknown> }[] = [];
        const at = () => (msg: string, fields?: Record<string, unknown>) => void logged.push({ msg, fields });
        const log: Logger = { debug: at(), info: at(), warn: at(), error: at() };
        await withServer(
          {},
          async (broken) => {
            const o = await org(broken);
            // A table gone from under the service: a failure no input can explain.
            await broken.services.deps.db.execute(sql`drop table tags cascade`);
            const res = await o.admin.get("/api/tags");
            expect(res.status).toBe(500);
            expect(res.body.error).toMatchObject({ code: "internal_error", requestId: res.headers.get("x-request-id") });
            expect(JSON.stringify(res.body)).not.toMatch(/relation|select|tags"|stack|at /i);
            expect(JSON.stringify(logged)).toContain(res.body.error.requestId);
          },
          { log },
        );
      },
    },
    row("| 501 | `not_configured` | the feature's provider is not configured (payments) |", { file: "test/integration/billing.test.ts", test: "invoices and portal answer 501 not_configured" }),
    row("| 503 | `unavailable` | a backing service (database, storage, provider) is down, or the database refuses sessions;", { file: "test/hardening/faults-storage.test.ts", test: "while it is down presign answers, confirm is 503 unavailable; the same confirm succeeds once it is back" }),
    row("the database refuses sessions; retry after `Retry-After` (5 s;", { file: "test/integration/database-refuses.test.ts", test: "ALLOW_CONNECTIONS false: 503 unavailable with Retry-After, and no parameter in the log" }),
    row("1 s when the request collided with another) |", { file: "test/unit/failure-parameters.test.ts", test: "a deadlock or a serialization failure asks for a retry after 1 s" }),
    {
      says: "A 405 answers any method the runtime knows (`TRACE`, `CONNECT`, `PROPFIND`, `OPTIONS` outside a CORS preflight, ...) on any path that takes others, outside `/api` too (`TRACE /healthz`).",
      by: { file: "test/integration/documents-agree.test.ts", test: "every method the runtime passes on, on the API's paths and the others" },
    },
    {
      says: "A method Bun does not know (`FOO`) never reaches the service: Bun closes the connection without an answer.",
      by: { file: "test/integration/documents-agree.test.ts", test: "a method the runtime does not know is dropped before the service sees it: no answer at all" },
    },
    {
      says: "Every answer carries `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY`, `Referrer-Policy: no-referrer`, a `Content-Security-Policy` that allows nothing",
      by: { file: "test/hardening/secrets.test.ts", test: "on successes, refusals, unknown routes, MCP and health checks alike" },
      check: async (server) => {
        const res = await fetch(`${server.url}/api/me`);
        await res.arrayBuffer();
        expect(res.headers.get("content-security-policy")).toStartWith("default-src 'none'");
      },
    },
    {
      says: "`Cache-Control: no-store` (answers hold presigned URLs and new secrets) and, when `PUBLIC_URL` is https, HSTS.",
      by: { file: "test/hardening/secrets.test.ts", test: "HSTS is sent only when the public address is https" },
    },

    // Uploads and downloads.
    {
      says: "Every presign first resolves the bucket in the caller's organization (404) and checks the key's reach (403), then signs.",
      by: { file: UPLOADS, test: "another organization's bucket or object is 404 before anything is signed" },
    },
    {
      says: "- `Content-Type`: the one given, else one guessed from the key's extension;",
      by: { file: UPLOADS, test: "the content type defaults from the extension; kind falls back to the extension" },
    },
    {
      says: "the URL works for one PUT, and a second one (even after confirm) is refused with `412`;",
      by: { file: ATTACK, test: "an upload URL is dead after confirm: a second PUT of other bytes is refused, the object keeps its size" },
    },
    {
      says: "- `x-amz-tagging`, when tags were given.",
      by: { file: UPLOADS, test: "tags are signed as the x-amz-tagging header, joined with '&', and stored with the object" },
    },
    {
      says: "Never a `Content-Length`: the client sends the body's own",
      by: { file: BOUND, test: "curl sending exactly the returned headers (as the README does) uploads fewer bytes than declared" },
    },
    {
      says: "The URL lives `UPLOAD_URL_EXPIRES_IN` seconds (900 by default).",
      check: async (server) => {
        await defaults({ UPLOAD_URL_EXPIRES_IN: 900 })();
        const o = await org(server);
        const bucket = await newBucket(o);
        const p = await o.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "life.txt" });
        expect(p.body.expiresIn).toBe(server.config.uploadUrlExpiresIn);
        expect(new URL(p.body.url).searchParams.get("X-Amz-Expires")).toBe(String(server.config.uploadUrlExpiresIn));
      },
    },
    {
      says: "**Quota**: `size` (bytes, up to 5 TiB) is optional.",
      check: async (server) => {
        expect(bodyField(await openapi(server), "POST /api/presign/upload", "size")).toMatchObject({ minimum: 0, maximum: 5 * 1024 ** 4 });
      },
    },
    {
      says: "(a reservation that would pass the allocation is 403 `quota_exceeded`), and a shorter body uploads as well.",
      by: { file: BOUND, test: "a body smaller than the declared size uploads and confirms with its true size" },
    },
    {
      says: "999999, PUT 1234 bytes: the object and the usage say 1234).",
      by: { file: BOUND, test: "curl sending exactly the returned headers (as the README does) uploads fewer bytes than declared" },
    },
    {
      says: "the URL carries a signed maximum (the query parameter `max-content-length`, covered by the signature, so it cannot be raised or dropped)",
      by: { file: "test/integration/local-s3-max-length.test.ts", test: "the maximum is covered by the signature: raised or removed, the URL is refused" },
    },
    {
      says: "the declared `size`, or `UPLOAD_UNSIZED_MAX_BYTES` (64 MiB by default) without one.",
      by: { file: BOUND, test: "without a size the URL is still bounded, by UPLOAD_UNSIZED_MAX_BYTES (64 MiB by default)" },
    },
    {
      says: "A longer body is refused at the PUT with `400 EntityTooLarge`, up front when its `Content-Length` says so, else as soon as a chunked body passes it, and nothing is stored;",
      by: { file: BOUND, test: "a streamed body with no length is refused once it passes the declared size" },
    },
    {
      says: "S3 can only sign an exact `Content-Length`, not a maximum, so the PUT is not bounded (beyond the store's own limit on a single PUT, 5 GiB on S3).",
      by: { file: BOUND, test: "the URL carries no maximum, and a smaller body confirms with its true size" },
    },
    {
      says: "otherwise confirm answers 403 `quota_exceeded` and deletes the bytes (no media object, no usage; an object they replaced is gone with them).",
      by: { file: BOUND, test: "a body above the declared size that does not fit the allocation is refused at confirm (403) and deleted" },
    },
    {
      says: "the allocation that way (on the embedded node after the `UPLOAD_UNSIZED_MAX_BYTES` bound at the PUT).",
      by: { file: ATTACK, test: "without a size nothing is promised: confirm measures, refuses past the quota with 403 and deletes the bytes" },
    },
    {
      says: "A multipart upload's parts are measured at `complete-upload`: a total above what `size` reserved has its excess reserved there, or the upload is refused with 403 `quota_exceeded` and aborted.",
      by: { file: ATTACK, test: "multipart: a total above the declared size is refused at complete-upload; without a size, confirm measures" },
    },
    {
      says: "Reservations never confirmed expire (the URL's lifetime plus an hour; a multipart upload 24 hours after its last part was presigned) and are released by a sweeper",
      by: { file: UPLOADS, test: "reservations that are never confirmed expire and are released by the sweeper" },
      check: reservationLifetimes,
    },
    {
      says: "**Unconfirmed bytes** are bounded in size, not only in time.",
      by: { file: UNCONFIRMED, test: "the finding: ten URLs without a size on a 100 KB allocation" },
    },
    {
      says: "What an organization has used, plus what its unconfirmed uploads count, may pass its allocation by at most one `UPLOAD_UNSIZED_MAX_BYTES`.",
      by: { file: UNCONFIRMED, test: "the bound is the free allocation plus one URL without a size: declared sizes count, and are refused past it too" },
    },
    {
      says: "an organization with nothing outstanding can always presign without one, even with its allocation full.",
      by: { file: UNCONFIRMED, test: "an organization with nothing outstanding can always presign without a size, even with its allocation full" },
    },
    {
      says: "A presign (or `upload-part`) past the bound is 403 `quota_exceeded` and reserves nothing; its message says how many uploads are outstanding and the bytes they count:",
      by: { file: UNCONFIRMED, test: "multipart parts are counted as their URLs are given out, at the per-part maximum, and refused past the bound" },
    },
    {
      says: "URLs without a size presigned again for one key count once (the key holds one object whichever is used), so such a retry costs nothing.",
      by: { file: UNCONFIRMED, test: "URLs presigned again for one key (a retry) count once" },
    },
    {
      says: "a part URL's maximum is `UPLOAD_UNSIZED_MAX_BYTES` (more when a declared size needs larger parts to fit in 10,000: the size divided by 10,000, rounded up to the MiB; at most 5 GiB),",
      by: { file: UNCONFIRMED, test: "a part's maximum is UPLOAD_UNSIZED_MAX_BYTES, larger when a declared size needs it to fit in 10,000 parts, at most 5 GiB" },
    },
    {
      says: "less when the organization's room under the bound is smaller; with no room left the part is refused with 403. On the embedded node a longer part is `400 EntityTooLarge`:",
      by: { file: UNCONFIRMED, test: "a part URL's maximum shrinks to the room left under the bound; with none left the part is refused" },
    },
    {
      says: "before counting a part that would take the upload past its declared size, the service measures the parts in storage (waiting at most 2 s for the list; without it, the count stands).",
      by: { file: UNCONFIRMED, test: "a part URL waits at most 2 s for the store's list of parts, then counts as it stood" },
    },
    {
      says: "It runs every minute in every server and worker process and releases the reservations due oldest first, up to 10,000 a pass,",
      by: { file: UNCONFIRMED, test: "one sweep goes on for at most 100 batches (10,000 reservations by default); the next pass takes the rest" },
    },
    {
      says: "so unconfirmed bytes go about a minute after their deadline: 75 minutes after presign with the default URL lifetime, 24 hours after the last part URL of a multipart upload.",
      by: { file: UNCONFIRMED, test: "one sweep releases every reservation due, oldest first, not only the latest hundred" },
      check: reservationLifetimes,
    },
    {
      says: "`complete-upload` of an upload storage no longer has open (already completed, or aborted) is 409 `conflict`.",
      by: { file: ATTACK, test: "complete-upload repeated without parts is 409, not 500" },
    },
    {
      says: "So is any multipart call on an upload id the service gave out (it remembers them 30 days) once the upload is closed: its key confirmed, or aborted, or expired;",
      by: { file: "test/integration/documents-agree.test.ts", test: "repeated after completing, before and after the confirm" },
    },
    {
      says: "an id it never gave out for that bucket and key is 404.",
      by: { file: "test/integration/documents-agree.test.ts", test: "an id is remembered 30 days: one given out longer ago is forgotten (404)" },
    },
    {
      says: "**Upload tags** (`tags` on upload, create-multipart and complete-upload): at most 10 labels of at most 128 characters",
      by: { file: UPLOADS, test: "download expiresIn 60..604800" },
    },
    {
      says: "of letters, digits, spaces and `+ - = . _ : / @` (what S3 accepts in tags",
      by: { file: ATTACK, test: "tags with CR, LF, TAB or other control characters are 400" },
    },
    {
      says: "`x-amz-tagging` header, each label URL-encoded and joined with `&`",
      by: { file: UPLOADS, test: "tags are signed as the x-amz-tagging header, joined with '&', and stored with the object" },
    },
    {
      says: "`{ objectId, expiresIn? }` (60..604800 seconds, default 3600)",
      by: { file: UPLOADS, test: "download expiresIn 60..604800" },
      check: async (server) => {
        const o = await org(server);
        const bucket = await newBucket(o);
        const obj = await upload(o.admin, bucket.id, "default-life.txt", "x");
        expect((await o.admin.post("/api/presign/download", { objectId: obj.id })).body.expiresIn).toBe(3600);
      },
    },
    {
      says: "that downloads as an attachment. `GET /api/media/{id}/stream` answers 302 to a URL without the attachment disposition (for players and `<img>`), valid for an hour.",
      check: async (server) => {
        const o = await org(server);
        const bucket = await newBucket(o);
        const obj = await upload(o.admin, bucket.id, "pic.txt", "hello", { contentType: "text/plain" });
        const download = new URL((await o.admin.post("/api/presign/download", { objectId: obj.id })).body.url);
        expect(download.searchParams.get("response-content-disposition")).toStartWith("attachment");
        const stream = await o.admin.get(`/api/media/${obj.id}/stream`);
        expect(stream.status).toBe(302);
        const to = new URL(stream.headers.get("location")!);
        expect(to.searchParams.get("response-content-disposition")).toBeNull();
        expect(to.searchParams.get("X-Amz-Expires")).toBe("3600");
      },
    },
    {
      says: "- 1 to 987 bytes of well-formed UTF-8: S3 keys stop at 1024 bytes and `<bucketId>/` takes 37;",
      by: { file: "test/hardening/object-keys.test.ts", test: "keys the architecture forbids are refused at presign, with the reason" },
    },
    {
      says: "at most 64 keys of at most 128 characters, values a string (at most 2048 characters), number, boolean or null.",
      by: { file: "test/integration/media.test.ts", test: "PUT metadata replaces the whole object; values are strings, numbers, booleans or null" },
    },
    {
      says: "its bytes stay 7 days, then a purge job removes them and their derivatives",
      by: { file: "test/integration/media.test.ts", test: "the bytes stay for the retention period, then the purge job removes them" },
    },
    {
      says: "A bucket can be deleted only when it holds no live object (409 otherwise).",
      by: { file: "test/integration/buckets.test.ts", test: "deleting a bucket that holds live objects is 409; soft-deleted objects do not count" },
    },

    // Retries and rate limits.
    {
      says: "**Idempotency-Key** (1 to 255 characters) on `POST`, `PUT`, `DELETE` or `PATCH`",
      by: { file: IDEM, test: "an empty or over-long key is a 400" },
    },
    {
      says: "a 2xx answer is kept 24 hours and replayed, with `idempotency-replayed: true`",
      by: { file: IDEM, test: "replayed just before 24 h, executed afresh after" },
    },
    {
      says: "While the first still runs, the same key gets 409 `idempotency_in_flight`.",
      by: { file: IDEM, test: "50 at once create exactly one bucket; the others replay it or are told it is in flight" },
    },
    {
      says: "`GET` ignores the header; `/mcp` and the payment webhook never take part.",
      by: { file: IDEM, test: "GET ignores the header: the second GET sees the state it finds" },
    },
    {
      says: "**Rate limit**: `RATE_LIMIT_PER_MINUTE` (300) requests per minute per credential (an API key, or a JWT user), REST and MCP together; requests without a valid credential count per client address.",
      by: { file: RATE, test: "every POST to /mcp counts against the credential's bucket, shared with REST" },
    },
    {
      says: "Every counted answer carries `RateLimit-Policy: \"default\";q=300;w=60` and `RateLimit: \"default\";r=<remaining>;t=<seconds>`; a refused one is 429 `rate_limited` with `Retry-After`.",
      check: async () => {
        await withServer({ RATE_LIMIT_PER_MINUTE: "" }, async (plain) => {
          const o = await org(plain);
          const res = await o.admin.get("/api/me");
          expect(res.headers.get("ratelimit-policy")).toBe('"default";q=300;w=60');
          expect(res.headers.get("ratelimit")).toMatch(/^"default";r=\d+;t=\d+$/);
        });
      },
    },
    {
      says: "raw body is checked (a signature older than 5 minutes is refused)",
      by: { file: "test/integration/webhook.test.ts", test: "a stale signature (older than 300 s) is refused and records nothing" },
    },
    {
      says: "parameter, is the permission until `expires` (403 otherwise).",
      by: { file: "test/integration/render.test.ts", test: "tampered: another size, another signature, a later expiry are all refused" },
    },
    {
      says: "It is rate limited per address like the other public routes",
      by: { file: "test/claims/docs-guards.ts", test: "signed render URLs and unknown `/api/...` paths." },
    },
    {
      says: "curl runs with `fail-with-body`, so a refused request fails the block.",
      by: { file: "test/e2e/doc-examples.test.ts", test: "every example in the documentation" },
    },

    // Limits of ours.
    { says: "| page size | 200 (default 50); invoices 100 (default 20) |", by: { file: "test/integration/buckets.test.ts", test: "list is paginated with total and hasMore" } },
    { says: "| request body | `MAX_BODY_BYTES`, 1 MiB by default |", by: { file: ERRORS, test: "oversized bodies are 413" } },
    { says: "| tags, categories per object | 100 each |", by: { file: ORGANIZING, test: "at most 100). If any id is not a tag of the organization" } },
    { says: "| tag and category names | 128 characters |", by: { file: "test/integration/tags.test.ts", test: "invalid names are 400 validation_error on name" } },
    {
      says: "| items per set; rendition width and height | 100; 1..16384 px |",
      by: { file: ORGANIZING, test: "At most 100 items per set (409 beyond)." },
      check: async (server) => {
        const doc = await openapi(server);
        for (const side of ["width", "height"]) expect(bodyField(doc, "POST /api/sets/{id}/items", side)).toMatchObject({ minimum: 1, maximum: 16384 });
      },
    },
    {
      says: "| generated rendition; generated items of one set; set generations | 40 megapixels; 400 megapixels; 60 per organization an hour,",
      by: { file: "test/integration/set-limits.test.ts", test: "generations per organization an hour; then 429 with Retry-After" },
    },
    {
      says: "and 40 megapixels of renditions a minute on average (a generation of P megapixels needs the last P/40 minutes, at least one, to hold it with what was asked for in them) |",
      by: { file: "test/integration/set-limits.test.ts", test: "a set over a minute's worth needs as many quiet minutes as it spans" },
    },
    {
      says: "| search query | 500 characters; 16 words and phrases; 4 prefixes (each of 2 letters or digits at least); 8 alternatives joined by `OR` |",
      by: { file: "test/integration/search.test.ts", test: "a query too costly to run is 400 on q with a message saying which bound it passes" },
    },
    {
      says: "| searches and uncached renders running at once | `ORG_MAX_SEARCHES` (3) and `ORG_MAX_RENDERS` (2) per organization and process |",
      by: { file: "test/integration/org-concurrency.test.ts", test: "renders: the same, with their own cap" },
    },
    {
      says: "| time spent on searches and on uncached renders | `ORG_SEARCH_MS_PER_SECOND` (250 ms a second, 2.5 s at once) and `ORG_RENDER_MS_PER_SECOND` (500 ms a second, 5 s at once) per organization and process |",
      by: { file: "test/unit/org-budget.test.ts", test: "work within the burst runs at once; an organization that overdrew is refused with Retry-After, another is served" },
    },
    {
      says: "| requests per minute | `RATE_LIMIT_PER_MINUTE` (300) per credential; `ORG_RATE_LIMIT_PER_MINUTE` (1200) per organization |",
      by: { file: "test/integration/org-rate-limit.test.ts", test: "ORG_RATE_LIMIT_PER_MINUTE defaults to four times RATE_LIMIT_PER_MINUTE" },
    },
    {
      says: "| render width and height; signed render URL lifetime | 1..`RENDER_MAX_DIMENSION` (4096) px; 60 s..`RENDER_URL_MAX_SECONDS` (30 days) |",
      by: { file: "test/integration/render.test.ts", test: "sizes over RENDER_MAX_DIMENSION are refused before anything is read" },
      check: async (server) => {
        const doc = await openapi(server);
        expect(parameter(doc, "GET /api/media/{id}/render", "width")).toMatchObject({ minimum: 1 });
        expect(parameter(doc, "GET /api/media/{id}/render-url", "expiresIn")).toMatchObject({ minimum: 60 });
      },
    },
    { says: "| clips per storyboard; clip note | 1000; 2000 characters |", by: { file: ORGANIZING, test: "At most 1000 clips;" } },
    { says: "| capacity bought in one call | 10240 GB |", by: { file: "test/integration/billing.test.ts", test: "gb is an integer from 1 to 10240" } },
    { says: "| API key lifetime | 365 days (default 90) |", by: { file: "test/integration/api-keys.test.ts", test: "defaults: read scope, 90 days, secret once, accessKeyId with prefix" } },
  ],
  notPromises: [],
};

export default claims;
