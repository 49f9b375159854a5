import { expect } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { objectPath } from "../../domain/media/storage-keys.ts";
import { type AnyTool, inputLocation, pathParams } from "../../tools/define.ts";
import { registry } from "../../tools/registry.ts";
import { CLI, cliEnv } from "../support/cli.ts";
import { eventually } from "../support/eventually.ts";
import type { Api, ApiResponse } from "../support/http.ts";
import { mcpClient } from "../support/fixtures.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";
import { toolError } from "../support/mcp-results.ts";
import { approvedGrant } from "../support/oauth.ts";

/** One of everything that lives in a bucket: what a bucket-restricted key may or may not reach. */
export interface BucketData {
  bucketId: string;
  bucketName: string;
  objectId: string;
  objectKey: string;
  object2Id: string;
  setId: string;
  generatedItemId: string;
  attachedItemId: string;
  storyboardId: string;
  clipIds: [string, string];
  /** A multipart upload started and never completed: it holds a quota reservation. */
  uploadKey: string;
  uploadId: string;
  /** A deleted object, in the trash. */
  trashedId: string;
  /** An import by URL, settled (failed: its URL is refused), so no job changes it later. */
  importId: string;
}

/** An organization with one of everything, built through the public API. */
export interface Fixture {
  org: TestOrg;
  /** A word that appears in this organization's names and metadata only (search, leak checks). */
  marker: string;
  main: BucketData;
  other: BucketData;
  /** Deletable: holds nothing. */
  emptyBucketId: string;
  tagId: string;
  tag2Id: string;
  categoryId: string;
  childCategoryId: string;
  /** An unrestricted read key, and keys restricted to each bucket. */
  readKeyId: string;
  mainKeyId: string;
  otherKeyId: string;
  /** An unrestricted service credential, and one restricted to the other bucket. */
  serviceCredentialId: string;
  otherServiceCredentialId: string;
  /** A webhook endpoint (subscribed to bucket.deleted only, so the matrices' calls send it nothing) and its one delivery, done. */
  webhookId: string;
  deliveryId: string;
  /** An OAuth grant for the whole organization, and one restricted to the other bucket. */
  grantId: string;
  otherGrantId: string;
}

async function ok<T = any>(res: Promise<ApiResponse<T>> | ApiResponse<T>, what: string): Promise<T> {
  const r = await res;
  if (r.status >= 300) throw new Error(`${what} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function seedBucket(org: TestOrg, marker: string, label: string, tagIds: string[], categoryIds: string[]): Promise<BucketData> {
  const api = org.admin;
  const bucket = await ok(api.post("/api/buckets", { name: `${marker}-${label}` }), "bucket");
  const objectKey = `photos/${marker}-${label}-one.txt`;
  const one = await upload(api, bucket.id, objectKey, `first ${marker} ${label}`, { contentType: "text/plain" });
  const two = await upload(api, bucket.id, `photos/${marker}-${label}-two.txt`, `second ${marker}`, { contentType: "text/plain" });
  for (const id of [one.id, two.id]) await ok(api.put(`/api/media/${id}/metadata`, { metadata: { caption: `${marker} caption` } }), "metadata");
  await ok(api.put(`/api/objects/${one.id}/tags`, { tagIds }), "tags");
  await ok(api.put(`/api/objects/${one.id}/categories`, { categoryIds }), "categories");
  const set = await ok(api.post("/api/sets", { name: `${marker} set`, baseObjectId: one.id }), "set");
  const generated = await ok(api.post(`/api/sets/${set.id}/items`, { aspectRatio: "1:1", width: 100, height: 100, role: "square" }), "set item");
  const attached = await ok(api.post(`/api/sets/${set.id}/items`, { objectId: two.id, aspectRatio: "16:9", width: 1600, height: 900, role: "hero" }), "set item");
  const sb = await ok(api.post("/api/storyboards", { name: `${marker} board`, bucketId: bucket.id }), "storyboard");
  const c1 = await ok(api.post(`/api/storyboards/${sb.id}/clips`, { objectId: one.id, note: marker }), "clip");
  const c2 = await ok(api.post(`/api/storyboards/${sb.id}/clips`, { objectId: two.id }), "clip");
  const uploadKey = `big/${marker}-${label}.bin`;
  const mp = await ok(api.post("/api/presign/create-multipart", { bucketId: bucket.id, key: uploadKey, size: 1234 }), "multipart");
  const trashed = await upload(api, bucket.id, `trash/${marker}-${label}.txt`, `deleted ${marker}`, { contentType: "text/plain" });
  await ok(api.delete(`/api/media/${trashed.id}`), "delete");
  const imported = await ok(api.post("/api/imports", { bucketId: bucket.id, key: `imports/${marker}-${label}.jpg`, url: "http://localhost:9/never.jpg", wait: true }), "import");
  return {
    bucketId: bucket.id,
    bucketName: bucket.name,
    objectId: one.id,
    objectKey,
    object2Id: two.id,
    setId: set.id,
    generatedItemId: generated.id,
    attachedItemId: attached.id,
    storyboardId: sb.id,
    clipIds: [c1.id, c2.id],
    uploadKey,
    uploadId: mp.uploadId,
    trashedId: trashed.id,
    importId: imported.id,
  };
}

/** Where the fixtures' webhook endpoints deliver: one loopback receiver for the test process. */
let receiver: ReturnType<typeof Bun.serve> | null = null;
function receiverUrl(): string {
  receiver ??= Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(null, { status: 204 }) });
  receiver.unref();
  return `http://127.0.0.1:${receiver.port}/hooks`;
}

export async function buildFixture(org: TestOrg): Promise<Fixture> {
  const marker = `zq${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
  const api = org.admin;
  const tag = await ok(api.post("/api/tags", { name: `${marker} tag` }), "tag");
  const tag2 = await ok(api.post("/api/tags", { name: `${marker} spare` }), "tag");
  const category = await ok(api.post("/api/categories", { name: `${marker} root` }), "category");
  const child = await ok(api.post("/api/categories", { name: `${marker} child`, parentId: category.id }), "category");
  const main = await seedBucket(org, marker, "main", [tag.id], [child.id]);
  const other = await seedBucket(org, marker, "other", [tag.id, tag2.id], [category.id]);
  const empty = await ok(api.post("/api/buckets", { name: `${marker}-empty` }), "bucket");
  const key = async (body: Record<string, unknown>) => (await ok(api.post("/api/api-keys", { name: `${marker} key`, ...body }), "key")).id as string;
  const credential = async (body: Record<string, unknown>) =>
    (await ok(api.post("/api/service-credentials", { name: `${marker} service`, ...body }), "service credential")).id as string;
  const fixture: Fixture = {
    org,
    marker,
    main,
    other,
    emptyBucketId: empty.id,
    tagId: tag.id,
    tag2Id: tag2.id,
    categoryId: category.id,
    childCategoryId: child.id,
    readKeyId: await key({ scopes: ["read"] }),
    mainKeyId: await key({ scopes: ["read"], bucketId: main.bucketId }),
    otherKeyId: await key({ scopes: ["read"], bucketId: other.bucketId }),
    serviceCredentialId: await credential({ scopes: ["read"] }),
    otherServiceCredentialId: await credential({ scopes: ["read"], bucketId: other.bucketId }),
    webhookId: "",
    deliveryId: "",
    grantId: await approvedGrant(api.baseUrl, org.adminKey.secret, { scopes: ["read"] }),
    otherGrantId: await approvedGrant(api.baseUrl, org.adminKey.secret, { scopes: ["read"], bucketId: other.bucketId }),
  };
  const hook = await ok(api.post("/api/webhooks", { url: receiverUrl(), eventTypes: ["bucket.deleted"], description: marker }), "webhook");
  const sent = await ok(api.post(`/api/webhooks/${hook.id}/test`), "test event");
  fixture.webhookId = hook.id;
  fixture.deliveryId = sent.deliveryId;
  await eventually(async () => {
    const res = await api.get(`/api/webhooks/${hook.id}/deliveries`);
    return res.body.data[0]?.status === "succeeded" ? true : undefined;
  }, { what: "the fixture's test event to be delivered" });
  // Thumbnail jobs write in the background; the state digests must not race them.
  for (const id of [main.objectId, main.object2Id, other.objectId, other.object2Id]) {
    await eventually(async () => {
      const res = await api.get(`/api/media/${id}`);
      return res.body.thumbnail?.state === "pending" ? undefined : true;
    }, { what: `thumbnail of ${id} to settle` });
  }
  return fixture;
}

/** Every id and name of the fixture: none of them may appear in another organization's answers. */
export function secretsOf(f: Fixture): string[] {
  const perBucket = (b: BucketData) => [b.bucketId, b.objectId, b.object2Id, b.setId, b.generatedItemId, b.attachedItemId, b.storyboardId, ...b.clipIds, b.uploadId, b.trashedId, b.importId];
  return [
    f.marker,
    f.org.orgId,
    f.org.userId,
    f.org.adminKey.id,
    ...perBucket(f.main),
    ...perBucket(f.other),
    f.emptyBucketId,
    f.tagId,
    f.tag2Id,
    f.categoryId,
    f.childCategoryId,
    f.readKeyId,
    f.mainKeyId,
    f.otherKeyId,
    f.serviceCredentialId,
    f.otherServiceCredentialId,
    f.webhookId,
    f.deliveryId,
    f.grantId,
    f.otherGrantId,
  ];
}

/** The secrets found in an answer (expect it to be []). */
export function leaked(body: unknown, secrets: string[]): string[] {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return secrets.filter((s) => text.includes(s));
}

export type Input = Record<string, unknown>;

/** A tool over REST: path parameters substituted, the rest in the query (GET, DELETE) or the body. */
export function callRest(api: Api, tool: AnyTool, input: Input): Promise<ApiResponse> {
  let path = `/api${tool.http.path}`;
  const rest: Input = { ...input };
  for (const p of pathParams(tool.http.path)) {
    path = path.replace(`{${p}}`, encodeURIComponent(String(rest[p])));
    delete rest[p];
  }
  if (inputLocation(tool) === "body") return api.call(tool.http.method, path, rest);
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) qs.set(k, Array.isArray(v) ? v.join(",") : String(v));
  return api.call(tool.http.method, qs.size > 0 ? `${path}?${qs}` : path);
}

export interface McpOutcome {
  error: { code: string; message: string } | null;
  body: unknown;
}

export async function callMcp(client: Client, tool: AnyTool, input: Input): Promise<McpOutcome> {
  const result = await client.callTool({ name: tool.name, arguments: input });
  if (result.isError) return { error: toolError(result.content), body: result.content };
  return { error: null, body: result.structuredContent ?? result.content };
}

/** `media mcp`, the CLI's stdio bridge, as a desktop agent launches it. */
export async function connectStdioBridge(server: TestServer, secret: string): Promise<Client> {
  const client = new Client({ name: "matrix-stdio", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "--toolsets", "all"], env: cliEnv({ url: server.url, key: secret }), stderr: "pipe" }));
  return client;
}

/** Every toolset: the matrices cover every tool. */
export const connectMcp = (server: TestServer, secret: string): Promise<Client> => mcpClient(server, secret, "matrix", "?toolsets=all");

// API-call counters move with every authenticated request, refused ones included: not state.
const VOLATILE_COLUMNS = new Set(["api_calls"]);
// The audit log records every refused call by design: what it records is checked by test/hardening/audit.test.ts.
// A backfill's progress and the text it reads are written by jobs an earlier, accepted call
// queued (media_text_extract), finishing at their own pace during later checks; a refused
// call is stopped before it could queue one (its job_outbox rows are compared). The search
// change log gains a row with each of those jobs' text writes; what it records of the calls is
// checked by test/integration/search-answer-cache.test.ts.
const VOLATILE_TABLES = new Set(["audit_log", "backfill_runs", "media_text", "search_changes"]);

/** The tables with an org_id column, read once per database (the schema does not change during a run). */
const orgTablesOf = new WeakMap<object, Promise<string[]>>();
function orgTables(db: TestServer["services"]["deps"]["db"]): Promise<string[]> {
  let tables = orgTablesOf.get(db);
  if (!tables) {
    tables = db
      .execute(sql`select table_name from information_schema.columns where column_name = 'org_id' and table_schema = current_schema() order by table_name`)
      .then((r) => rowsOf<{ table_name: string }>(r).map((row) => row.table_name).filter((t) => !VOLATILE_TABLES.has(t)));
    orgTablesOf.set(db, tables);
  }
  return tables;
}

/**
 * Everything the database and storage hold for one organization, as sorted JSON rows per
 * table. Tables are found by their org_id column, so new tables are covered without edits.
 */
export async function orgDigest(server: TestServer, f: Fixture): Promise<Record<string, string[]>> {
  const { db } = server.services.deps;
  const orgId = f.org.orgId;
  // Metered calls and download egress are written in batches, and egress events folded by a
  // rollup; all done now, they cannot show up mid-comparison.
  await server.services.apiCalls.flush();
  await server.services.deps.egress?.flush();
  await server.services.rollup.flush();
  const tables = await orgTables(db);
  // One statement for every table, not a query each (about 40): the digests were a third of the
  // scope matrix's time, and the file went from 26.8 to 24.7 s on the embedded database.
  const reads = [
    ...tables.map((t) => sql`select ${t}::text as name, coalesce(json_agg(x), '[]'::json) as rows from ${sql.identifier(t)} x where x.org_id = ${orgId}`),
    sql`select 'organizations' as name, coalesce(json_agg(x), '[]'::json) as rows from organizations x where x.id = ${orgId}`,
    sql`select 'derivatives' as name, coalesce(json_agg(x), '[]'::json) as rows from derivatives x where x.object_id in (select id from media_objects where org_id = ${orgId})`,
    sql`select 'job_outbox' as name, coalesce(json_agg(x), '[]'::json) as rows from (select id, name, payload from job_outbox where payload->>'orgId' = ${orgId}) x`,
  ];
  const digest: Record<string, string[]> = {};
  const put = (name: string, rows: Record<string, unknown>[]) => {
    digest[name] = rows
      .map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).filter(([k]) => !VOLATILE_COLUMNS.has(k)).sort(([a], [b]) => a.localeCompare(b)))))
      .sort();
  };
  for (const r of rowsOf<{ name: string; rows: Record<string, unknown>[] | string }>(await db.execute(sql.join(reads, sql` union all `)))) {
    put(r.name, typeof r.rows === "string" ? JSON.parse(r.rows) : r.rows);
  }
  const stored: Record<string, unknown>[] = [];
  for (const b of [f.main, f.other]) {
    const head = await server.services.deps.storage.head(objectPath(b.bucketId, b.objectKey));
    stored.push({ key: b.objectKey, size: head?.size ?? null, etag: head?.etag ?? null });
  }
  put("storage", stored);
  return digest;
}

/** Fails when the table and the registry disagree on which tools exist. */
export function expectCoversRegistry(table: Record<string, unknown>): void {
  const names = registry.map((t) => t.name).sort();
  const keys = Object.keys(table).sort();
  expect({ missingFromTable: names.filter((n) => !keys.includes(n)), notInRegistry: keys.filter((k) => !names.includes(k)) }).toEqual({
    missingFromTable: [],
    notInRegistry: [],
  });
}
