import { expect } from "bun:test";
import type { Credential } from "../../tools/access.ts";
import { toolsFor } from "../../tools/access.ts";
import { registry } from "../../tools/registry.ts";
import { ALL_TOOLS, DEFAULT_SELECTION, selectTools, TOOLSET_NAMES, type ToolSelection } from "../../tools/toolsets.ts";
import { processorsFor } from "../../worker/processors.ts";
import { CODE_SECONDS } from "../../domain/access/oauth-grants.ts";
import { ACCESS_TOKEN_SECONDS, REFRESH_TOKEN_DAYS } from "../../domain/access/oauth-tokens.ts";
import { OAUTH_SECRET_GRACE_SECONDS, UNUSED_CLIENT_HOURS } from "../../domain/access/oauth-sweep.ts";
import type { PageClaims } from "./claim.ts";
import { defaults, GiB, org } from "../support/claim-checks.ts";
import { LISTING_CREDENTIALS } from "../support/mcp-listing.ts";
import { png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import { startServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

const MCP = "test/e2e/mcp.test.ts";
const LIST = "test/e2e/mcp-tool-list.test.ts";
const IMPORT = "test/e2e/mcp-import.test.ts";
const OAUTH = "test/e2e/oauth.test.ts";
const CONSENT = "test/browser/oauth-consent.test.ts";
const SWEEP = "test/e2e/oauth-sweep.test.ts";

const count = (credential: Credential, selection: ToolSelection = ALL_TOOLS) => selectTools(toolsFor(registry, credential), selection).length;
/** The tools each credential of the page's table is listed, as the bench counts them. */
const credentialCounts = async () => {
  expect({
    admin: count(LISTING_CREDENTIALS.admin!),
    rwd: count(LISTING_CREDENTIALS["read, write, delete"]!),
    rw: count(LISTING_CREDENTIALS["read, write"]!),
    read: count(LISTING_CREDENTIALS.read!),
    restricted: count(LISTING_CREDENTIALS["read, write, delete; one bucket"]!),
  }).toEqual({ admin: 89, rwd: 60, rw: 50, read: 25, restricted: 54 });
  expect(count(LISTING_CREDENTIALS.admin!)).toBe(registry.length);
};
const toolsetCounts = async () => {
  const admin = LISTING_CREDENTIALS.admin!;
  const counts = Object.fromEntries(TOOLSET_NAMES.map((set) => [set, count(admin, { toolsets: [set], readOnly: false })]));
  expect(counts).toEqual({ context: 1, buckets: 4, media: 11, upload: 5, search: 4, labels: 9, multipart: 4, collections: 15, trash: 3, usage: 3, billing: 6, keys: 9, webhooks: 11, admin: 4 });
  expect(count(admin, DEFAULT_SELECTION)).toBe(34);
};
const BENCH = "bytes measured by npm run bench -- tool-list (bench/results/tool-list.md; the first measurement in bench/notes/2026-11-24-mcp-tools.md); they move with every description, and the promise is the 40 KB budget the tests hold";

export default {
  page: "docs/mcp.md",
  claims: [
    { says: "A missing or refused credential is 401 with the REST error envelope and, as RFC 6750 and the MCP authorization spec ask, a challenge:", by: { file: MCP, test: "no token or a bad token is 401 before the MCP layer" } },
    { says: "as RFC 6750 and the MCP authorization spec ask, a challenge:", by: { file: MCP, test: "a 401 says 'Bearer' and points at the protected-resource metadata (RFC 6750, RFC 9728)" } },
    { says: "REST routes answer their 401s with the same challenge.", by: { file: MCP, test: "a 401 says 'Bearer' and points at the protected-resource metadata (RFC 6750, RFC 9728)" } },
    { says: "what they need from the first 401: the protected-resource document names this service as its own authorization server, whose metadata (RFC 8414) is served at /.well-known/oauth-authorization-server.", by: { file: OAUTH, test: "discovery: the protected-resource documents name this service; its metadata (RFC 8414) names the endpoints" } },
    { says: "| POST /register | dynamic client registration (RFC 7591): redirect URIs https, or http to 127.0.0.1, [::1] or localhost, nothing else;", by: { file: OAUTH, test: "registration (RFC 7591): public clients only; redirect URIs https or loopback http" } },
    { says: "| GET /authorize | checks the request and sends the person to the console's consent page (/console/oauth/consent) |", by: { file: OAUTH, test: "the authorization endpoint hands a valid request to the console's consent page" } },
    { says: "They tick scopes, only among those their own credential has (read, write and delete come ticked, admin does not), optionally pick one bucket, and allow or deny.", by: { file: CONSENT, test: "the person signs in, picks, approves" } },
    { says: "listed under Connected apps in the console and by oauth_grants_list, ended by oauth_grants_revoke.", by: { file: CONSENT, test: "connected apps lists the grant; revoking it ends the token at once" } },
    { says: "Its creation, each refresh and its end are in the audit log", by: { file: OAUTH, test: "each step is in the audit log" } },
    { says: "an OAuth token cannot approve another grant.", by: { file: OAUTH, test: "an OAuth token cannot approve more grants" } },
    { says: "| POST /revoke | token revocation (RFC 7009, revocation_endpoint in the metadata): token and the client's client_id; a refresh token ends its whole grant, an access token ends alone;", by: { file: OAUTH, test: "revocation (RFC 7009): revoking a refresh token ends its grant" } },
    { says: "a refresh token ends its whole grant, an access token ends alone;", by: { file: OAUTH, test: "revocation of an access token ends that token only; the grant refreshes on" } },
    { says: "an unknown or already revoked token is answered 200 too, another client's token is 400 unauthorized_client |", by: { file: OAUTH, test: "revocation refusals: no token, no client_id, another client's token" } },
    { says: "an unknown or already revoked token is answered 200 too,", by: { file: OAUTH, test: "revocation (RFC 7009): revoking a refresh token ends its grant" } },
    { says: "With an OAuth token, me_get (and GET /api/me) answers credential.type oauth, the grant as oauthGrantId, the client's client_id as accessKeyId and the grant's end as expiresAt. An API key created with an OAuth token never outlives its grant,", by: { file: OAUTH, test: "me_get and GET /api/me name an OAuth token as oauth" } },
    { says: "The periodic maintenance deletes codes and tokens one hour after they expire (until then, one presented is told it expired),", check: async () => expect(OAUTH_SECRET_GRACE_SECONDS).toBe(3600) },
    { says: "The periodic maintenance deletes codes and tokens one hour after they expire", by: { file: SWEEP, test: "expired codes and tokens of every organization go; live ones, and ones just expired, stay" } },
    { says: "and clients that got no grant within 24 hours of registering,", check: async () => expect(UNUSED_CLIENT_HOURS).toBe(24) },
    { says: "and clients that got no grant within 24 hours of registering, of every organization, in bounded batches;", by: { file: SWEEP, test: "clients never granted anything within a day go" } },
    { says: "several instances may sweep at once.", by: { file: SWEEP, test: "two instances sweeping at once" } },
    { says: "Access tokens (mat_…) live one hour.", check: async () => expect(ACCESS_TOKEN_SECONDS).toBe(3600) },
    { says: "Access tokens (mat_…) live one hour. Refresh tokens (mrt_…) live 30 days and rotate: each refresh answers a new pair, and a spent refresh token presented again revokes the whole grant.", by: { file: OAUTH, test: "refresh tokens rotate; presenting a spent one revokes the grant" } },
    { says: "Refresh tokens (mrt_…) live 30 days", check: async () => expect(REFRESH_TOKEN_DAYS).toBe(30) },
    { says: "A code lives 5 minutes", check: async () => expect(CODE_SECONDS).toBe(300) },
    { says: "A code lives 5 minutes and is good once; presented again, it revokes the grant it made.", by: { file: OAUTH, test: "a reused code is refused, and the tokens it bought are revoked with its grant" } },
    { says: "PKCE is required, S256 only.", by: { file: OAUTH, test: "other bad requests go back to the client: no PKCE, plain PKCE" } },
    { says: "Used at the other it is refused with 401 and the challenge above.", by: { file: OAUTH, test: "wrong audience: a token for the REST API is refused at /mcp with 401 pointing at the metadata" } },
    { says: "An unknown client or a redirect URI it did not register is a 400 the person sees: nothing is sent to an unverified address.", by: { file: OAUTH, test: "wrong redirect URI or unknown client: told to the person (400), never redirected" } },
    { says: "Any other problem goes back to the client at its redirect URI (invalid_request, invalid_scope, invalid_target, access_denied).", by: { file: OAUTH, test: "other bad requests go back to the client" } },
    { says: "/token answers in OAuth's shape, {\"error\": \"invalid_grant\", \"error_description\": \"…\"} for a wrong verifier, a reused or expired code, a revoked grant or a spent refresh token.", by: { file: OAUTH, test: "PKCE mismatch is refused" } },
    { says: "Origin, when sent, is this server or one of CORS_ORIGINS; others get 403 forbidden before the credential is even looked at.", by: { file: MCP, test: "DNS rebinding: Host and Origin must name this server" } },
    { says: "no pattern beside a format (Zod writes a 150-character regex next to every format: uuid and date-time), no ±2^53-1 bounds on integers,", by: { file: "test/unit/mcp-tool-list.test.ts", test: "no construct popular clients stumble on, in any input or output schema" } },
    { says: "limits that only guard the server (strings of 128 characters or more, numbers of a million or more, a content type's header pattern) and floors a field's meaning has (not empty, not negative) are left to validation;", by: { file: "test/unit/mcp-tool-list.test.ts", test: "limits that only guard the server, and floors a field's meaning has, are left to validation; the rest stay; ids say so in words" } },
    { says: "key's whole listing that is at most 40 KB (about 10k tokens), a budget", by: { file: "test/unit/mcp-tool-list.test.ts", test: "an admin key's whole listing, as a model reads it, fits in 40 KB" } },
    { says: "key's whole listing that is at most 40 KB (about 10k tokens), a budget", by: { file: LIST, test: "what a model reads of an admin key's listing, as sent, fits in 40 KB" } },
    { says: "| admin | 89 |", check: credentialCounts },
    { says: "| read, write, delete | 60 |", check: credentialCounts },
    { says: "| read, write | 50 |", check: credentialCounts },
    { says: "| read | 25 |", check: credentialCounts },
    { says: "| read, write, delete, restricted to a bucket | 54 |", check: credentialCounts },
    { says: "labels: 34 tools,", check: toolsetCounts },
    { says: "An unknown name is a 400 bad_request that lists the sets; so is a toolsets that names nothing (toolsets= or toolsets=,):", by: { file: LIST, test: "a value that could widen or is a guess is a 400 naming the parameter, not a silent choice" } },
    {
      says: "An unknown name is a 400 bad_request that lists the sets;",
      check: async (server) => {
        const o = await org(server);
        const res = await fetch(`${server.url}/mcp?toolsets=nonsense`, {
          method: "POST",
          headers: { authorization: `Bearer ${o.adminKey.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        });
        const { error } = (await res.json()) as { error: { code: string; message: string } };
        expect([res.status, error.code]).toEqual([400, "bad_request"]);
        for (const set of TOOLSET_NAMES) expect(error.message).toContain(set);
      },
    },
    { says: "any other value, an empty one, a typo or the bare ?readonly included, keeps only the tools that change nothing", by: { file: "test/e2e/mcp-selection.test.ts", test: "a value that is not an explicit false (a typo, an empty value, the bare name) means read-only" } },
    { says: "A tool call is answered as an event stream when the client accepts one (Accept: text/event-stream) and either carries a progress token (_meta.progressToken) or speaks the protocol as client libraries do (it sends MCP-Protocol-Version,", by: { file: "test/e2e/mcp-notifications.test.ts", test: "a plain tools/call of a real tool sends its start, its run and its end as info notices" } },
    { says: "a script that posts one call without that header, as the web console does, gets one JSON body.", by: { file: "test/e2e/mcp-notifications.test.ts", test: "a script that posts a call without MCP-Protocol-Version still gets one JSON body" } },
    { says: "with a progress token, at least three increasing progress steps of 1: 0 started, 0.5 running, 0.9 answered (the result being put together), 1 done;", by: { file: "test/e2e/mcp-notifications.test.ts", test: "every call with a progress token gets at least three increasing steps before its result" } },
    { says: "its end (tool, request id, duration, ok), a warning for a failed call; no progress token needed;", by: { file: "test/e2e/mcp-notifications.test.ts", test: "a plain tools/call of a real tool sends its start, its run and its end as info notices" } },
    { says: "media mcp relays them, holding a result that follows notifications back a moment", by: { file: "test/e2e/mcp-notifications.test.ts", test: "the bridge relays log notices of a plain call and the progress steps" } },
    { says: "transfer code: one presigned PUT below 16 MiB, a parallel multipart upload above, failed", check: async () => expect((await import("../../cli/upload.ts")).UPLOAD_DEFAULTS.threshold).toBe(16 * 1024 * 1024) },
    { says: "refused whole; what is outside is a forbidden error that names the path and the roots and says", by: { file: "test/e2e/cli-mcp-local-files.test.ts", test: "anything outside is refused with a clear message" } },
    { says: "(media://objects/{id}/thumbnail) can be read on its own. Resource errors carry one MCP error -32002: prefix.", by: { file: "test/e2e/mcp-ergonomics.test.ts", test: "a resource error carries one 'MCP error -32002:' prefix, not two" } },
    { says: "Retry-After header); an unknown tool names the toolset its prefix belongs to and that set's", by: { file: "test/unit/agent-message.test.ts", test: "a rate limit says how many seconds to wait" } },
    { says: "golden hour, golden-hour and the tag's id name the same tag. An entry that names nothing matches nothing.", by: { file: "test/e2e/mcp-labels-by-name.test.ts", test: "media_list and search find the same objects whichever way the tag or category is named" } },
    { says: "a rate limit says how many seconds to wait (retry in 12 s: an agent never sees the", by: { file: "test/unit/agent-message.test.ts", test: "a rate limit says how many seconds to wait" } },
    { says: "in the headers X-MCP-Toolsets and X-MCP-Readonly (same values; the query's and the headers' choices add up)", by: { file: "test/e2e/mcp-selection.test.ts", test: "narrow as the query does, and add up with it" } },
    { says: "| context (default) | 1 | me_get: who the credential is |", check: toolsetCounts },
    { says: "| buckets (default) | 4 | create, list, get, delete buckets |", check: toolsetCounts },
    { says: "| media (default) | 11 | list, get, metadata, delete, move, bulk changes and deletes, stream URL, thumbnail, renders |", check: toolsetCounts },
    { says: "| upload (default) | 5 | presigned upload, confirm, download, import by URL and its state |", check: toolsetCounts },
    { says: "| search (default) | 4 | full-text and faceted search, the text inside files, similar pictures, near-duplicates |", check: toolsetCounts },
    { says: "| labels (default) | 9 | tags and categories, and assigning them |", check: toolsetCounts },
    { says: "answers not_found, since the id no longer names anything and an unknown id is a 404 everywhere.", by: { file: LIST, test: "destructive and not idempotent: a second delete of the same object is not_found, and changes nothing more" } },
    { says: "What can be checked at once is refused with a 400 before anything is fetched:", by: { file: "test/integration/imports-refused.test.ts", test: "address literals of every refused class are a 400 before anything is fetched" } },
    { says: "At most IMPORT_MAX_REDIRECTS redirects (5), IMPORT_MAX_BYTES bytes (1 GiB, checked against Content-Length before reading and again while reading), IMPORT_TIMEOUT_MS for the whole fetch (5 minutes). Only a 200 is a file.", by: { file: IMPORT, test: "limits: redirects, size (declared, discovered and streamed), time, status, content type" } },
    { says: "At most IMPORT_MAX_REDIRECTS redirects (5), IMPORT_MAX_BYTES bytes (1 GiB,", check: defaults({ IMPORT_MAX_REDIRECTS: 5, IMPORT_MAX_BYTES: GiB, IMPORT_TIMEOUT_MS: 300_000 }) },
    {
      says: "A server slower than IMPORT_MIN_RATE_BYTES (32 KiB) per IMPORT_MIN_RATE_WINDOW_MS (30 s), counted from the start of the fetch, waiting for the answer included, is given up on at once: the import fails with timeout (\"Fewer than 32768 bytes arrived in 30 s: ...\"), so a server that trickles does not hold a job slot for the whole 5 minutes.",
      by: { file: "test/integration/job-classes.test.ts", test: "an import from a server that trickles fails as too slow after one window, fetched once, long before IMPORT_TIMEOUT_MS" },
      check: defaults({ IMPORT_MIN_RATE_BYTES: 32 * 1024, IMPORT_MIN_RATE_WINDOW_MS: 30_000 }),
    },
    { says: "counted from the start of the fetch, waiting for the answer included,", by: { file: "test/unit/url-fetcher-rate.test.ts", test: "a server that never answers is stopped by the floor too" } },
    {
      says: "An answer without Content-Length is measured as it is stored: bytes that do not fit the allocation are deleted and the import fails with quota_exceeded, without fetching again.",
      by: { file: "test/integration/quota-in-jobs.test.ts", test: "an import without Content-Length that outgrows the allocation is fetched once and fails as quota_exceeded" },
    },
    { says: "reservation a presigned upload makes (403 quota_exceeded at once);", by: { file: IMPORT, test: "a declared size is reserved like a presign's" } },
    { says: "a Content-Length larger than what is reserved is reserved too before a byte is kept.", by: { file: "test/integration/imports-quota.test.ts", test: "a size learnt from Content-Length is held, then given back when the import is stored" } },
    {
      says: "A waiting call, REST or MCP, asks the HTTP server to keep its connection open for the wait (Bun closes one idle for 30 seconds otherwise;",
      beside: true,
      check: async () => {
        // A generation that takes 35 s: past the server's 30 s idle limit, within the wait's two minutes.
        const slow = await startServer({
          embedded: true,
          processors: (deps) => {
            const real = processorsFor(deps);
            return {
              ...real,
              "sets.generate": {
                run: async (job, run) => {
                  await Bun.sleep(35_000);
                  return real["sets.generate"]!.run(job, run);
                },
              },
            };
          },
        });
        try {
          const o = await org(slow);
          const bucket = await newBucket(o);
          const base = await upload(o.admin, bucket.id, "base.png", await png(64, 64), { contentType: "image/png" });
          const set = (await o.admin.post("/api/sets", { name: "slow", baseObjectId: base.id })).body.id;
          expect((await o.admin.post(`/api/sets/${set}/items`, { aspectRatio: "1:1", width: 32, height: 32, role: "square" })).status).toBe(201);
          const waited = await o.admin.post(`/api/sets/${set}/generate`, { wait: true });
          expect([waited.status, waited.body.status]).toEqual([202, "settled"]);
          expect(waited.body.renditions.map((r: { state: string }) => r.state)).toEqual(["made"]);
        } finally {
          await slow.stop();
        }
      },
    },
    { says: "A line is at most 300 characters.", by: { file: "test/unit/mcp-summary.test.ts", test: "a line is never long, whatever the output" } },
    { says: "These scenarios apply to this server, and pass: server-initialize, ping, tools-list, tools-call-error, logging-set-level, completion-complete, resources-list, dns-rebinding-protection (two checks).", by: { file: "test/e2e/mcp-conformance.test.ts", test: "the conformance suite's scenarios that apply to this server pass" } },
  ],
  notPromises: [
    { says: "estimated at 4 bytes each):", why: "how the bench turns bytes into tokens, a rule of thumb" },
    { says: "(inspector 2.12.0, last run on 2026-11-29 with an admin key: 87 tools)", why: "a record of a manual run of an outside tool; test/unit/mcp-tool-list.test.ts holds the constructs it warns about" },
    { says: "| admin | 89 | 40,260 (~10.1k tokens) | 105,670 (~26.4k tokens) |", why: BENCH },
    { says: "| read, write, delete | 60 | 29,432 (~7.4k tokens) | 69,731 (~17.4k tokens) |", why: BENCH },
    { says: "| read, write | 50 | 26,189 (~6.5k tokens) | 62,981 (~15.7k tokens) |", why: BENCH },
    { says: "| read | 25 | 12,227 (~3.1k tokens) | 38,567 (~9.6k tokens) |", why: BENCH },
    { says: "| read, write, delete, restricted to a bucket | 54 | 27,990 (~7.0k tokens) | 65,658 (~16.4k tokens) |", why: BENCH },
    { says: "The 83 tools of 2026-11-28 read 40,506 bytes for an admin key; the shorter descriptions and the compaction rules above brought the same 83 tools to 35,366 bytes,", why: BENCH },
    { says: "19,387 bytes a model reads for an admin key)", why: BENCH },
    { says: "(35,332 with the fields added to them since and ids without format: uuid).", why: BENCH },
    { says: "| tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content, -with-logging, -with-progress, json-schema-2020-12 |", why: "names of the conformance suite's scenarios that do not apply, and why; not headers" },
    { says: "| resources-read-text, -read-binary, -templates-read |", why: "names of the conformance suite's scenarios that do not apply; not headers" },
    { says: "| tools-call-sampling, tools-call-elicitation, elicitation-* |", why: "names of the conformance suite's scenarios that do not apply; not headers" },
    { says: "| resources-subscribe, -unsubscribe, server-sse-polling, server-sse-multiple-streams |", why: "names of the conformance suite's scenarios that do not apply; not headers" },
  ],
} satisfies PageClaims;
