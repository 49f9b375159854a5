import { expect } from "bun:test";
import { loadConfig } from "../../app/config.ts";
import type { PageClaims } from "./claim.ts";
import { bootstrapKey, DAY_MS, org } from "../support/claim-checks.ts";
import { newBucket } from "../support/objects.ts";
import { upload } from "../support/upload.ts";

const claims: PageClaims = {
  page: "README.md",
  claims: [
    {
      says: "It is served by this process from local files under a strict Content-Security-Policy",
      check: async (server) => {
        const res = await fetch(`${server.url}/console`);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        const csp = res.headers.get("content-security-policy")!;
        expect(csp).toContain("script-src 'self'");
        expect(csp).toContain("frame-ancestors 'none'");
        expect(csp).not.toContain("unsafe-inline");
        expect(csp).not.toContain("unsafe-eval");
      },
    },
    {
      says: "offers only what the signed-in credential may do",
      by: { file: "test/browser/console.test.ts", test: "a read-only key sees no upload or delete controls" },
    },
    {
      says: "`package.json` asks for `^20.19.0 || >=22.12.0`, the versions npm 11 and the tools the tests run under Node accept",
      by: { file: "test/contract/engines.test.ts", test: "the declared range admits exactly the releases every package run under Node accepts" },
    },
    {
      says: "prints `EBADENGINE` warnings for `@scalar/*`, `pdfjs-dist` and `content-type`, which declare Node 22 or later. They are harmless here, since none of them runs under the machine's Node: pdf.js runs in the worker under Bun, the API docs page's script is sent to browsers as a file, and that `content-type` belongs to the MCP conformance suite, which the tests run under Bun.",
      by: { file: "test/contract/engines.test.ts", test: "the packages npm warns about on the lowest declared Node are only those the README names as harmless" },
    },
    {
      says: "The service listens on `PORT` at `HOST` (by default `3000` on `127.0.0.1`), and the embedded storage node, where presigned URLs send the bytes, on `STORAGE_PORT` (by default `9000`, on `127.0.0.1` only)",
      check: async (server) => {
        const config = loadConfig({});
        expect([config.port, config.host, config.s3.embeddedPort]).toEqual([3000, "127.0.0.1", 9000]);
        // Whatever HOST is, the embedded node listens on loopback.
        expect(server.services.backends.storage).toStartWith("embedded at http://127.0.0.1:");
      },
    },
    {
      says: "A port already taken stops the start with one line naming the port and the variable to change.",
      by: { file: "test/e2e/start.test.ts", test: "in use: one line naming the port and" },
    },
    {
      says: "So does a data directory another process is using (one process per DATA_DIR),",
      by: { file: "test/integration/storage-dir-lock.test.ts", test: "npm start: a second server on the same DATA_DIR exits 1 naming the directory" },
    },
    {
      says: "and a PostgreSQL or S3 store the start cannot reach.",
      by: { file: "test/e2e/start-unreachable.test.ts", test: "PostgreSQL refusing connections: one line naming it and DATABASE_URL" },
    },
    {
      says: "and a PostgreSQL or S3 store the start cannot reach.",
      by: { file: "test/e2e/start-unreachable.test.ts", test: "the S3 store refusing connections: one line naming it and S3_ENDPOINT" },
    },
    {
      says: "The bootstrap key expires after 365 days",
      check: async () => expect((await bootstrapKey()).lifetimeMs).toBe(365 * DAY_MS),
    },
    {
      says: "(the longest an API key may live)",
      by: { file: "test/integration/api-keys.test.ts", test: "expiresInDays bounds: 1 and 365 accepted; 0, 366 and fractions refused" },
    },
    {
      says: "Keys are stored as SHA-256 hashes; a lost secret cannot be recovered, only rotated",
      by: { file: "test/hardening/secrets.test.ts", test: "a key's secret is stored only as its SHA-256; lists and lookups never show it" },
    },
    {
      says: "`tools/list` on the bare URL shows every tool the key may use (its scopes and bucket decide)",
      by: { file: "test/e2e/mcp-tool-list.test.ts", test: "lists every tool each credential may use: the registry filtered by scopes and bucket" },
    },
    {
      says: "for an admin key 81 tools, of which a model reads about 39 KB, some 10k tokens (names, descriptions, input schemas;",
      by: { file: "test/unit/mcp-tool-list.test.ts", test: "an admin key's whole listing, as a model reads it, fits in 40 KB" },
    },
    {
      says: "`/mcp?toolsets=media,search` and `readonly=true` narrow it",
      by: { file: "test/e2e/mcp-tool-list.test.ts", test: "toolsets narrows to the sets named" },
    },
    {
      says: "a refused key is a 401 with `WWW-Authenticate: Bearer` and RFC 9728 metadata",
      by: { file: "test/e2e/mcp.test.ts", test: "a 401 says 'Bearer' and points at the protected-resource metadata (RFC 6750, RFC 9728)" },
    },
    {
      says: "so `openapi-typescript` and other generators give `MediaObject`, `BucketList` ... types",
      by: { file: "test/contract/openapi-tools.test.ts", test: "openapi-typescript generates named types for every resource and list, and a client using them compiles" },
    },
    {
      says: "lists are `{ data, total, hasMore }` with `limit` (default 50, at most 200",
      check: async (server) => {
        // Every list in the OpenAPI document, so a new list cannot drift from the rule unseen.
        const doc = await (await fetch(`${server.url}/api/openapi.json`)).json();
        const lists: string[] = [];
        for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
          for (const [method, op] of Object.entries<any>(ops)) {
            const ref = op.responses?.["200"]?.content?.["application/json"]?.schema?.$ref as string | undefined;
            const schema = ref ? doc.components.schemas[ref.split("/").pop()!] : undefined;
            if (!schema?.properties?.data || !schema.properties.total || !schema.properties.hasMore) continue;
            if (path === "/api/billing/invoices") continue; // the payment provider's pages: the exception the README names
            if (path === "/api/categories") continue; // the tree is answered whole (docs/conventions.md, Lists)
            lists.push(`${method} ${path}`);
            const limit = (op.parameters ?? []).find((p: { name: string }) => p.name === "limit");
            expect({ list: `${method} ${path}`, ...limit?.schema }).toMatchObject({ list: `${method} ${path}`, default: 50, maximum: 200 });
          }
        }
        expect(lists.length).toBeGreaterThan(8);
        const o = await org(server);
        for (let i = 0; i < 51; i++) await o.admin.post("/api/buckets", { name: `page-${i}` });
        const page = await o.admin.get("/api/buckets");
        expect([page.body.data.length, page.body.total, page.body.hasMore]).toEqual([50, 51, true]);
        expect((await o.admin.get("/api/buckets?limit=200")).body.data).toHaveLength(51);
        expect((await o.admin.get("/api/buckets?limit=201")).status).toBe(400);
      },
    },
    {
      says: "invoices, which the payment provider pages, 20 and 100",
      check: async (server) => {
        const doc = await (await fetch(`${server.url}/api/openapi.json`)).json();
        const limit = doc.paths["/api/billing/invoices"].get.parameters.find((p: { name: string }) => p.name === "limit");
        expect(limit.schema).toMatchObject({ default: 20, maximum: 100 });
        const o = await org(server);
        expect((await o.admin.get("/api/billing/invoices?limit=101")).status).toBe(400);
      },
    },
    {
      says: "records into `info` the SHA-256 of the bytes",
      by: { file: "test/integration/render.test.ts", test: "every kind: the SHA-256 of its bytes, a ThumbHash and a dominant colour" },
    },
    {
      says: "300 requests per minute per credential",
      by: { file: "test/integration/rate-limit.test.ts", test: "RATE_LIMIT_PER_MINUTE defaults to 300" },
    },
    {
      says: "shared across instances through Redis",
      by: { file: "test/integration/guards-shared.test.ts", test: "they share one limit per credential" },
    },
    {
      says: "deleted objects stay restorable for 7 days",
      by: { file: "test/integration/trash.test.ts", test: "a restored object comes back with its tags, categories, thumbnail and set memberships" },
    },
    {
      says: "at most 100 entries per facet",
      check: async (server) => {
        const o = await org(server);
        const bucket = await newBucket(o);
        const many = await upload(o.admin, bucket.id, "facets/many.txt", "zqfacets", { contentType: "text/plain" });
        const one = await upload(o.admin, bucket.id, "facets/one.txt", "zqfacets", { contentType: "text/plain" });
        const tagIds: string[] = [];
        for (let i = 0; i < 101; i++) tagIds.push((await o.admin.post("/api/tags", { name: `f${i}` })).body.id);
        expect((await o.admin.put(`/api/objects/${many.id}/tags`, { tagIds: tagIds.slice(0, 100) })).status).toBe(200);
        expect((await o.admin.put(`/api/objects/${one.id}/tags`, { tagIds: tagIds.slice(99) })).status).toBe(200);
        const found = await o.admin.get("/api/search?q=facets");
        expect(found.status).toBe(200);
        expect(found.body.total).toBe(2);
        expect(found.body.facets.tags).toHaveLength(100);
        // Most frequent first: the tag both carry leads.
        expect(found.body.facets.tags[0]).toMatchObject({ slug: "f99", count: 2 });
      },
    },
    {
      says: "Totals and facets are exact up to 10,000 matches",
      by: { file: "test/integration/search-exact-limit.test.ts", test: "10,000 matches: exact; one more: a lower bound of 10,000" },
    },
    {
      says: "A query may hold at most 16 words and phrases, 4 prefixes (each of at least 2 letters or digits) and 8 alternatives joined by `OR`, in at most 500 characters; past that it is `400 validation_error` on `q`, saying which bound it passes",
      by: { file: "test/integration/search.test.ts", test: "a query too costly to run is 400 on q with a message saying which bound it passes" },
    },
  ],
  notPromises: [
    {
      says: "97 KB with titles, annotations and output schemas",
      why: "a measurement of the whole listing, written to bench/results/tool-list.md by `npm run bench -- tool-list`; test/unit/mcp-tool-list.test.ts keeps it under 110 KB",
    },
    {
      says: "spends about 0.7 s in npm per command; `npm link` (about 0.1 s) or the compiled binary (`npm run build:cli`, about 0.08 s) start fast",
      why: "start-up times measured on one machine, not a bound the service keeps",
    },
  ],
};

export default claims;
