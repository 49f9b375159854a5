import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SCOPES, type Scope } from "../../domain/access/caller.ts";
import type { AnyTool, Reach } from "../../tools/define.ts";
import { registry } from "../../tools/registry.ts";
import type { Api } from "../support/http.ts";
import { newOrg, startServer, type TestServer } from "../support/server.ts";
import { mayUse } from "../../tools/access.ts";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import {
  type BucketData,
  buildFixture,
  callMcp,
  callRest,
  connectMcp,
  connectStdioBridge,
  expectCoversRegistry,
  type Fixture,
  type Input,
  leaked,
  orgDigest,
} from "./matrix-fixtures.ts";

/**
 * Every tool under every single scope, and under a key restricted to one
 * bucket. The table is keyed by tool name and must cover the registry: a new tool fails the
 * suite until it says which scope it needs and what a bucket-restricted key may do with it.
 */

/** What a key restricted to the fixture's main bucket gets. */
type Restricted =
  /** Aimed at the other bucket's data (or an org-wide change): refused, nothing changes. */
  | { kind: "refused"; input: (f: Fixture) => Input }
  /** Its own bucket or org-wide reads: works, and shows nothing of the other bucket. */
  | { kind: "allowed"; input: (f: Fixture) => Input; status?: number[]; mcpError?: string };

interface Entry {
  /**
   * What the audit log keeps of the tool's calls: "calls", every one whatever its outcome (a
   * tool that changes something); "refusals", only the refused ones (a read).
   */
  audit: "calls" | "refusals";
  /** The scope the conventions give the tool (docs/conventions.md). */
  scope: Scope | "any";
  /** "organization": a bucket-restricted key may not use the tool at all (the entry's restricted cases are all refused). */
  reach?: Reach;
  /** A call that would succeed for a caller with the scope (refused calls must be refused despite that). */
  input: (f: Fixture) => Input;
  restricted: Restricted[];
}

const refused = (input: (f: Fixture) => Input): Restricted => ({ kind: "refused", input });
const allowed = (input: (f: Fixture) => Input, status = [200, 201, 202], mcpError?: string): Restricted => ({ kind: "allowed", input, status, mcpError });
const unique = (what: string) => `${what}-${crypto.randomUUID().slice(0, 8)}`;
const item = { aspectRatio: "1:1", width: 10, height: 10, role: "probe" };
const none = () => ({});

const table: Record<string, Entry> = {
  me_get: { audit: "refusals", scope: "any", input: none, restricted: [allowed(none)] },
  api_keys_list: { audit: "refusals", scope: "admin", input: none, restricted: [allowed(none)] },
  api_keys_create: {
    audit: "calls",
    scope: "admin",
    input: () => ({ name: unique("key") }),
    restricted: [refused((f) => ({ name: "x", bucketId: f.other.bucketId })), refused(() => ({ name: "unrestricted" })), allowed((f) => ({ name: unique("key"), bucketId: f.main.bucketId }))],
  },
  api_keys_delete: { audit: "calls", scope: "admin", input: (f) => ({ id: f.readKeyId }), restricted: [refused((f) => ({ id: f.otherKeyId })), refused((f) => ({ id: f.readKeyId }))] },
  api_keys_rotate: { audit: "calls", scope: "admin", input: (f) => ({ id: f.readKeyId }), restricted: [refused((f) => ({ id: f.otherKeyId })), refused((f) => ({ id: f.readKeyId }))] },
  service_credentials_list: { audit: "refusals", scope: "admin", input: none, restricted: [allowed(none)] },
  oauth_grants_list: { audit: "refusals", scope: "admin", input: none, restricted: [allowed(none)] },
  // A key restricted to one bucket revokes only grants limited to that bucket.
  oauth_grants_revoke: { audit: "calls", scope: "admin", input: (f) => ({ id: f.grantId }), restricted: [refused((f) => ({ id: f.otherGrantId })), refused((f) => ({ id: f.grantId }))] },
  service_credentials_create: {
    audit: "calls",
    scope: "admin",
    input: () => ({ name: unique("service") }),
    restricted: [refused((f) => ({ name: "x", bucketId: f.other.bucketId })), refused(() => ({ name: "unrestricted" })), allowed((f) => ({ name: unique("service"), bucketId: f.main.bucketId }))],
  },
  service_credentials_delete: {
    audit: "calls",
    scope: "admin",
    input: (f) => ({ id: f.serviceCredentialId }),
    restricted: [refused((f) => ({ id: f.otherServiceCredentialId })), refused((f) => ({ id: f.serviceCredentialId }))],
  },

  buckets_list: { audit: "refusals", scope: "read", input: none, restricted: [allowed(none)] },
  buckets_create: { audit: "calls", scope: "write", reach: "organization", input: () => ({ name: unique("bucket") }), restricted: [refused(() => ({ name: unique("bucket") }))] },
  buckets_get: { audit: "refusals", scope: "read", input: (f) => ({ id: f.main.bucketId }), restricted: [refused((f) => ({ id: f.other.bucketId })), allowed((f) => ({ id: f.main.bucketId }))] },
  buckets_delete: {
    audit: "calls",
    scope: "delete", reach: "organization",
    input: (f) => ({ id: f.emptyBucketId }),
    // Deleting buckets with a restricted key is 403, its own included (reach: organization).
    restricted: [refused((f) => ({ id: f.emptyBucketId })), refused((f) => ({ id: f.main.bucketId }))],
  },

  media_list: { audit: "refusals", scope: "read", input: none, restricted: [refused((f) => ({ bucketId: f.other.bucketId })), allowed(none), allowed((f) => ({ bucketId: f.main.bucketId }))] },
  media_get: { audit: "refusals", scope: "read", input: (f) => ({ id: f.main.objectId }), restricted: [refused((f) => ({ id: f.other.objectId })), allowed((f) => ({ id: f.main.objectId }))] },
  media_similar: {
    audit: "refusals",
    scope: "read",
    input: (f) => ({ id: f.main.objectId }),
    restricted: [refused((f) => ({ id: f.other.objectId })), refused((f) => ({ id: f.main.objectId, bucketId: f.other.bucketId })), allowed((f) => ({ id: f.main.objectId }))],
  },
  media_duplicates: { audit: "refusals", scope: "read", input: (f) => ({ id: f.main.bucketId }), restricted: [refused((f) => ({ id: f.other.bucketId })), allowed((f) => ({ id: f.main.bucketId }))] },
  media_delete: { audit: "calls", scope: "delete", input: (f) => ({ id: f.main.objectId }), restricted: [refused((f) => ({ id: f.other.objectId }))] },
  media_update_metadata: {
    audit: "calls",
    scope: "write",
    input: (f) => ({ id: f.main.objectId, metadata: { probe: true } }),
    restricted: [refused((f) => ({ id: f.other.objectId, metadata: { probe: true } }))],
  },
  // The second object moves to one key: the first call moves it, every later one finds it there.
  objects_move: {
    audit: "calls",
    scope: "write",
    input: (f) => ({ id: f.main.object2Id, key: "moved/probe.jpg" }),
    restricted: [refused((f) => ({ id: f.other.objectId, key: "stolen.jpg" })), refused((f) => ({ id: f.main.object2Id, key: "out.jpg", bucketId: f.other.bucketId }))],
  },
  objects_bulk_update: {
    audit: "calls",
    scope: "write",
    input: (f) => ({ ids: [f.main.object2Id], addTags: [f.tagId] }),
    restricted: [
      refused((f) => ({ filter: { bucketId: f.other.bucketId }, addTags: [f.tagId] })),
      refused((f) => ({ ids: [f.main.object2Id], moveTo: { bucketId: f.other.bucketId } })),
    ],
  },
  // Trashed objects are not found, one by one: the call works and deletes nothing.
  objects_bulk_delete: { audit: "calls", scope: "delete", input: (f) => ({ ids: [f.main.trashedId] }), restricted: [refused((f) => ({ filter: { bucketId: f.other.bucketId } }))] },
  // The trash is bucket data like media: a restricted key sees and acts on its bucket's only.
  trash_list: { audit: "refusals", scope: "read", input: none, restricted: [refused((f) => ({ bucketId: f.other.bucketId })), allowed(none), allowed((f) => ({ bucketId: f.main.bucketId }))] },
  trash_restore: { audit: "calls", scope: "write", input: (f) => ({ id: f.main.trashedId }), restricted: [refused((f) => ({ id: f.other.trashedId }))] },
  trash_purge: { audit: "calls", scope: "delete", input: (f) => ({ id: f.main.trashedId }), restricted: [refused((f) => ({ id: f.other.trashedId }))] },
  media_stream: { audit: "refusals", scope: "read", input: (f) => ({ id: f.main.objectId }), restricted: [refused((f) => ({ id: f.other.objectId }))] },
  media_thumbnail: { audit: "refusals", scope: "read", input: (f) => ({ id: f.main.objectId }), restricted: [refused((f) => ({ id: f.other.objectId }))] },
  media_render: { audit: "refusals", scope: "read", input: (f) => ({ id: f.main.objectId, width: 10 }), restricted: [refused((f) => ({ id: f.other.objectId, width: 10 }))] },
  media_render_url: {
    audit: "refusals",
    scope: "read",
    input: (f) => ({ id: f.main.objectId, width: 10 }),
    restricted: [refused((f) => ({ id: f.other.objectId, width: 10 })), allowed((f) => ({ id: f.main.objectId, width: 10 }))],
  },
  media_settings_get: { audit: "refusals", scope: "read", reach: "organization", input: none, restricted: [refused(none)] },
  media_settings_update: { audit: "calls", scope: "admin", reach: "organization", input: () => ({ stripLocation: true }), restricted: [refused(() => ({ stripLocation: false }))] },

  presign_upload: { audit: "calls", scope: "write", input: (f) => ({ bucketId: f.main.bucketId, key: "probe.txt", size: 10 }), restricted: [refused((f) => ({ bucketId: f.other.bucketId, key: "probe.txt", size: 10 }))] },
  media_import: {
    audit: "calls",
    scope: "write",
    input: (f) => ({ bucketId: f.main.bucketId, key: "imports/probe.jpg", url: "http://localhost:9/probe.jpg", wait: true }),
    restricted: [refused((f) => ({ bucketId: f.other.bucketId, key: "imports/probe.jpg", url: "http://localhost:9/probe.jpg", wait: true }))],
  },
  media_import_get: { audit: "refusals", scope: "read", input: (f) => ({ id: f.main.importId }), restricted: [refused((f) => ({ id: f.other.importId }))] },
  presign_create_multipart: {
    audit: "calls",
    scope: "write",
    input: (f) => ({ bucketId: f.main.bucketId, key: "probe.bin", size: 10 }),
    restricted: [refused((f) => ({ bucketId: f.other.bucketId, key: "probe.bin", size: 10 }))],
  },
  presign_upload_part: { audit: "calls", scope: "write", input: (f) => multipart(f.main, { partNumber: 1 }), restricted: [refused((f) => multipart(f.other, { partNumber: 1 }))] },
  presign_complete_upload: { audit: "calls", scope: "write", input: (f) => multipart(f.main), restricted: [refused((f) => multipart(f.other))] },
  presign_abort_multipart: { audit: "calls", scope: "write", input: (f) => multipart(f.main), restricted: [refused((f) => multipart(f.other))] },
  presign_confirm: {
    audit: "calls",
    scope: "write",
    input: (f) => ({ bucketId: f.main.bucketId, key: f.main.objectKey }),
    restricted: [refused((f) => ({ bucketId: f.other.bucketId, key: f.other.objectKey }))],
  },
  // A download only reads, so it needs `read` although it is a POST (the one exception to the method rule).
  presign_download: { audit: "refusals", scope: "read", input: (f) => ({ objectId: f.main.objectId }), restricted: [refused((f) => ({ objectId: f.other.objectId }))] },

  search: {
    audit: "refusals",
    scope: "read",
    input: (f) => ({ q: f.marker }),
    restricted: [refused((f) => ({ q: f.marker, bucketId: f.other.bucketId })), allowed((f) => ({ q: f.marker })), allowed(() => ({ q: "caption" }))],
  },

  media_text_extract: {
    audit: "calls",
    scope: "write",
    input: (f) => ({ id: f.main.objectId }),
    restricted: [refused((f) => ({ id: f.other.objectId })), refused((f) => ({ bucketId: f.other.bucketId })), allowed((f) => ({ id: f.main.objectId })), allowed(() => ({}))],
  },

  tags_list: { audit: "refusals", scope: "read", input: none, restricted: [allowed(none)] },
  tags_create: { audit: "calls", scope: "write", input: () => ({ name: unique("tag") }), restricted: [allowed(() => ({ name: unique("tag") }))] },
  // Tags and categories are shared by every bucket: a restricted key may not delete them.
  tags_delete: { audit: "calls", scope: "delete", reach: "organization", input: (f) => ({ id: f.tag2Id }), restricted: [refused((f) => ({ id: f.tag2Id }))] },
  objects_set_tags: { audit: "calls", scope: "write", input: (f) => ({ id: f.main.objectId, tagIds: [] }), restricted: [refused((f) => ({ id: f.other.objectId, tagIds: [] }))] },

  categories_list: { audit: "refusals", scope: "read", input: none, restricted: [allowed(none)] },
  categories_create: { audit: "calls", scope: "write", input: () => ({ name: unique("category") }), restricted: [allowed(() => ({ name: unique("category") }))] },
  categories_move: {
    audit: "calls",
    scope: "write",
    reach: "organization",
    input: (f) => ({ id: f.childCategoryId, parentId: f.categoryId }),
    restricted: [refused((f) => ({ id: f.childCategoryId, parentId: null }))],
  },
  categories_delete: { audit: "calls", scope: "delete", reach: "organization", input: (f) => ({ id: f.childCategoryId }), restricted: [refused((f) => ({ id: f.childCategoryId }))] },
  objects_set_categories: {
    audit: "calls",
    scope: "write",
    input: (f) => ({ id: f.main.objectId, categoryIds: [] }),
    restricted: [refused((f) => ({ id: f.other.objectId, categoryIds: [] }))],
  },

  sets_list: { audit: "refusals", scope: "read", input: none, restricted: [allowed(none)] },
  sets_create: { audit: "calls", scope: "write", input: (f) => ({ name: "probe", baseObjectId: f.main.objectId }), restricted: [refused((f) => ({ name: "probe", baseObjectId: f.other.objectId }))] },
  sets_get: { audit: "refusals", scope: "read", input: (f) => ({ id: f.main.setId }), restricted: [refused((f) => ({ id: f.other.setId })), allowed((f) => ({ id: f.main.setId }))] },
  sets_delete: { audit: "calls", scope: "delete", input: (f) => ({ id: f.main.setId }), restricted: [refused((f) => ({ id: f.other.setId }))] },
  sets_add_item: {
    audit: "calls",
    scope: "write",
    input: (f) => ({ id: f.main.setId, ...item }),
    restricted: [refused((f) => ({ id: f.other.setId, ...item })), refused((f) => ({ id: f.main.setId, objectId: f.other.object2Id, ...item }))],
  },
  sets_remove_item: {
    audit: "calls",
    scope: "delete",
    input: (f) => ({ id: f.main.setId, itemId: f.main.generatedItemId }),
    restricted: [refused((f) => ({ id: f.other.setId, itemId: f.other.generatedItemId }))],
  },
  sets_generate: { audit: "calls", scope: "write", input: (f) => ({ id: f.main.setId }), restricted: [refused((f) => ({ id: f.other.setId }))] },

  storyboards_list: { audit: "refusals", scope: "read", input: none, restricted: [allowed(none)] },
  storyboards_create: {
    audit: "calls",
    scope: "write",
    input: () => ({ name: unique("board") }),
    restricted: [refused((f) => ({ name: "probe", bucketId: f.other.bucketId })), allowed(() => ({ name: unique("board") }))],
  },
  storyboards_get: {
    audit: "refusals",
    scope: "read",
    input: (f) => ({ id: f.main.storyboardId }),
    restricted: [refused((f) => ({ id: f.other.storyboardId })), allowed((f) => ({ id: f.main.storyboardId }))],
  },
  storyboards_delete: { audit: "calls", scope: "delete", input: (f) => ({ id: f.main.storyboardId }), restricted: [refused((f) => ({ id: f.other.storyboardId }))] },
  storyboards_add_clip: {
    audit: "calls",
    scope: "write",
    input: (f) => ({ id: f.main.storyboardId, objectId: f.main.objectId }),
    restricted: [refused((f) => ({ id: f.other.storyboardId, objectId: f.other.objectId })), refused((f) => ({ id: f.main.storyboardId, objectId: f.other.objectId }))],
  },
  storyboards_reorder_clips: {
    audit: "calls",
    scope: "write",
    input: (f) => ({ id: f.main.storyboardId, clipIds: [...f.main.clipIds].reverse() }),
    restricted: [refused((f) => ({ id: f.other.storyboardId, clipIds: [...f.other.clipIds].reverse() }))],
  },
  storyboards_update_clip: {
    audit: "calls",
    scope: "write",
    input: (f) => ({ id: f.main.storyboardId, clipId: f.main.clipIds[0], note: "probe" }),
    restricted: [refused((f) => ({ id: f.other.storyboardId, clipId: f.other.clipIds[0], note: "probe" }))],
  },
  storyboards_remove_clip: {
    audit: "calls",
    scope: "delete",
    input: (f) => ({ id: f.main.storyboardId, clipId: f.main.clipIds[0] }),
    restricted: [refused((f) => ({ id: f.other.storyboardId, clipId: f.other.clipIds[0] }))],
  },

  usage_get: { audit: "refusals", scope: "read", input: none, restricted: [allowed(none)] },
  usage_history: { audit: "refusals", scope: "read", input: none, restricted: [allowed(none)] },
  usage_events_list: { audit: "refusals", scope: "read", input: none, restricted: [allowed(none)] },

  // Billing belongs to the whole organization: a key limited to one bucket is refused all of it.
  billing_subscription_get: { audit: "refusals", scope: "admin", reach: "organization", input: none, restricted: [refused(none)] },
  billing_capacity_add: { audit: "calls", scope: "admin", reach: "organization", input: () => ({ gb: 1 }), restricted: [refused(() => ({ gb: 1 }))] },
  billing_capacity_auto_set: { audit: "calls", scope: "admin", reach: "organization", input: () => autoCapacity, restricted: [refused(() => autoCapacity)] },
  billing_downgrade: { audit: "calls", scope: "admin", reach: "organization", input: () => ({ tierKey: "free" }), restricted: [refused(() => ({ tierKey: "free" }))] },
  // No payment provider in tests: 501 once past the scope check, but the restriction comes first.
  billing_invoices_list: { audit: "refusals", scope: "admin", reach: "organization", input: none, restricted: [refused(none)] },
  billing_portal_get: { audit: "calls", scope: "admin", reach: "organization", input: none, restricted: [refused(none)] },

  // Webhook endpoints receive every bucket's events, and the audit log covers the whole
  // organization: admin, and no bucket-restricted key.
  webhooks_create: { audit: "calls", scope: "admin", reach: "organization", input: () => hook, restricted: [refused(() => hook)] },
  webhooks_list: { audit: "refusals", scope: "admin", reach: "organization", input: none, restricted: [refused(none)] },
  webhooks_get: { audit: "refusals", scope: "admin", reach: "organization", input: (f) => ({ id: f.webhookId }), restricted: [refused((f) => ({ id: f.webhookId }))] },
  webhooks_update: { audit: "calls", scope: "admin", reach: "organization", input: (f) => ({ id: f.webhookId, description: "probe" }), restricted: [refused((f) => ({ id: f.webhookId, description: "probe" }))] },
  webhooks_enable: { audit: "calls", scope: "admin", reach: "organization", input: (f) => ({ id: f.webhookId }), restricted: [refused((f) => ({ id: f.webhookId }))] },
  webhooks_disable: { audit: "calls", scope: "admin", reach: "organization", input: (f) => ({ id: f.webhookId }), restricted: [refused((f) => ({ id: f.webhookId }))] },
  webhooks_delete: { audit: "calls", scope: "admin", reach: "organization", input: (f) => ({ id: f.webhookId }), restricted: [refused((f) => ({ id: f.webhookId }))] },
  webhooks_rotate_secret: { audit: "calls", scope: "admin", reach: "organization", input: (f) => ({ id: f.webhookId }), restricted: [refused((f) => ({ id: f.webhookId }))] },
  webhooks_send_test: { audit: "calls", scope: "admin", reach: "organization", input: (f) => ({ id: f.webhookId }), restricted: [refused((f) => ({ id: f.webhookId }))] },
  webhooks_deliveries_list: { audit: "refusals", scope: "admin", reach: "organization", input: (f) => ({ id: f.webhookId }), restricted: [refused((f) => ({ id: f.webhookId }))] },
  webhooks_redeliver: {
    audit: "calls",
    scope: "admin", reach: "organization",
    input: (f) => ({ id: f.webhookId, deliveryId: f.deliveryId }),
    restricted: [refused((f) => ({ id: f.webhookId, deliveryId: f.deliveryId }))],
  },
  audit_list: { audit: "refusals", scope: "admin", reach: "organization", input: none, restricted: [refused(none)] },

  // An operator's tool over every bucket's storage: admin, and the whole organization.
  reconcile_run: { audit: "calls", scope: "admin", reach: "organization", input: none, restricted: [refused(none)] },
};

/** An endpoint the matrix may create: on loopback, for an event type the matrix never causes. */
const hook = { url: "http://127.0.0.1:9/probe", eventTypes: ["bucket.deleted"] };

const autoCapacity = { enabled: false, incrementGb: 1, thresholdPct: 90, maxMonthlySpendCents: 0 };

function multipart(b: BucketData, extra: Input = {}): Input {
  return { bucketId: b.bucketId, key: b.uploadKey, uploadId: b.uploadId, ...extra };
}

/** The conventions' rule: GET read, POST/PUT write, DELETE delete; keys and billing admin; /me any. */
function scopeByRule(tool: AnyTool): Scope | "any" {
  if (tool.http.path === "/me") return "any";
  if (["/api-keys", "/service-credentials", "/oauth-grants", "/billing", "/webhooks", "/audit"].some((p) => tool.http.path.startsWith(p))) return "admin";
  return tool.http.method === "GET" ? "read" : tool.http.method === "DELETE" ? "delete" : "write";
}
const RULE_EXCEPTIONS: Record<string, string> = {
  presign_download: "a POST that only reads",
  reconcile_run: "an operator's check and repair of the whole organization's storage",
  media_settings_update: "the organization's privacy choices: admins only",
  objects_bulk_delete: "a POST only because up to 1000 ids do not fit a query string",
};

/** Every id of the fixture's data: with its ids swapped for unknown ones, a mutation touches nothing. */
function withUnknownIds(value: unknown, known: Set<string>): unknown {
  if (typeof value === "string") return known.has(value) ? crypto.randomUUID() : value;
  if (Array.isArray(value)) return value.map((v) => withUnknownIds(v, known));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withUnknownIds(v, known)]));
  return value;
}

const reachOf = (entry: Entry): Reach => entry.reach ?? "bucket";

/** Tools only the stdio bridge offers: they move files on the machine it runs on. */
const BRIDGE_ONLY = ["upload_files", "download_to"];

/** The audit entries written for one request (REST: its X-Request-Id; MCP: the id its error carries). */
async function auditedAs(requestId: string | null | undefined): Promise<{ action: string; status: number; org_id: string; error_code: string | null }[]> {
  if (!requestId) return [];
  return rowsOf(await server.services.deps.db.execute(sql`select action, status, org_id, error_code from audit_log where request_id = ${requestId}`));
}

/** What the table says a key may use, decided by the service's one access function. */
const allows = (entry: Entry, scopes: Scope[], bucketId: string | null = null) =>
  mayUse({ scope: entry.scope, reach: reachOf(entry) }, { scopes: new Set(scopes), bucketId });
const expectedFor = (scopes: Scope[], bucketId: string | null = null) =>
  registry.filter((t) => allows(table[t.name]!, scopes, bucketId)).map((t) => t.name).sort();

/** Every id of the fixture's data. */
const knownIds = () =>
  new Set([
    ...idsOf(S.main),
    ...idsOf(S.other),
    ...[S.emptyBucketId, S.tagId, S.tag2Id, S.categoryId, S.childCategoryId, S.readKeyId, S.mainKeyId, S.otherKeyId, S.webhookId, S.deliveryId],
    ...[S.serviceCredentialId, S.otherServiceCredentialId, S.grantId, S.otherGrantId],
  ]);

function idsOf(b: BucketData): string[] {
  return [b.bucketId, b.objectId, b.object2Id, b.setId, b.generatedItemId, b.attachedItemId, b.storyboardId, ...b.clipIds, b.uploadId, b.trashedId];
}

let server: TestServer;
let S: Fixture;
const keys = new Map<Scope, { api: Api; secret: string; mcp: Client }>();
let restricted: { api: Api; keyId: string; secret: string; mcp: Client };

beforeAll(async () => {
  server = await startServer();
  S = await buildFixture(await newOrg(server, "Scopes"));
  for (const scope of SCOPES) {
    const api = await S.org.keyClient([scope]);
    keys.set(scope, { api, secret: api.secret, mcp: await connectMcp(server, api.secret) });
  }
  const r = await S.org.keyClient(["admin"], { bucketId: S.main.bucketId });
  restricted = { api: r, keyId: r.keyId, secret: r.secret, mcp: await connectMcp(server, r.secret) };
}, 120_000);
afterAll(async () => {
  for (const k of keys.values()) await k.mcp.close();
  await restricted?.mcp.close();
  await server.stop();
}, 60_000);

describe("scope matrix", () => {
  test("the table has an entry for every registry tool and nothing else", () => {
    expectCoversRegistry(table);
  });

  test("the audit column says what the invoker does: every call of a tool that changes something, only refusals of a read", () => {
    for (const tool of registry) {
      const entry = table[tool.name];
      if (!entry) continue;
      expect({ tool: tool.name, audit: entry.audit }).toEqual({ tool: tool.name, audit: tool.annotations.readOnlyHint ? "refusals" : "calls" });
    }
  });

  test("the table's scopes follow the conventions' rule, and its scopes and reach are the registry's", () => {
    for (const tool of registry) {
      const entry = table[tool.name];
      if (!entry) continue;
      const rule = scopeByRule(tool);
      expect({ tool: tool.name, rule: RULE_EXCEPTIONS[tool.name] ? "exception" : entry.scope }).toEqual({ tool: tool.name, rule: RULE_EXCEPTIONS[tool.name] ? "exception" : rule });
      expect({ tool: tool.name, scope: tool.scope, reach: tool.reach }).toEqual({ tool: tool.name, scope: entry.scope, reach: reachOf(entry) });
      // An organization-wide tool has nothing a restricted key may do with it.
      if (reachOf(entry) === "organization") expect({ tool: tool.name, allowed: entry.restricted.filter((c) => c.kind === "allowed").length }).toEqual({ tool: tool.name, allowed: 0 });
    }
  });

  test("MCP tools/list shows exactly the tools each key may use (the table's scope and reach)", async () => {
    for (const [scope, key] of keys) {
      const { tools } = await key.mcp.listTools();
      expect({ scope, tools: tools.map((t) => t.name).sort() }).toEqual({ scope, tools: expectedFor([scope]) });
    }
    for (const scopes of [["read", "write"], ["write", "delete"]] as Scope[][]) {
      const key = await S.org.keyClient(scopes);
      const mcp = await connectMcp(server, key.secret);
      const { tools } = await mcp.listTools();
      await mcp.close();
      expect({ scopes, tools: tools.map((t) => t.name).sort() }).toEqual({ scopes, tools: expectedFor(scopes) });
    }
    // A bucket restriction takes away the organization-wide tools, and narrows data in the rest.
    const { tools } = await restricted.mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(expectedFor(["admin"], S.main.bucketId));
    expect(tools.length).toBeLessThan(registry.length);
  });

  test("the stdio bridge lists exactly what /mcp lists, tool by tool, for a restricted and an unrestricted key", async () => {
    for (const [label, secret] of [["restricted admin", restricted.secret], ["read", keys.get("read")!.secret]] as const) {
      const http = await connectMcp(server, secret);
      const stdio = await connectStdioBridge(server, secret);
      try {
        const [viaHttp, listed] = [(await http.listTools()).tools, (await stdio.listTools()).tools];
        // The bridge adds its own local-file tools (docs/mcp.md), each where the key may use the remote tool it is built on.
        const viaStdio = listed.filter((t) => !BRIDGE_ONLY.includes(t.name));
        const may = (name: string) => viaHttp.some((t) => t.name === name);
        expect({ label, own: listed.filter((t) => BRIDGE_ONLY.includes(t.name)).map((t) => t.name) }).toEqual({
          label,
          own: [...(may("presign_upload") ? ["upload_files"] : []), ...(may("presign_download") ? ["download_to"] : [])],
        });
        expect({ label, names: viaStdio.map((t) => t.name) }).toEqual({ label, names: viaHttp.map((t) => t.name) });
        for (const [i, tool] of viaHttp.entries()) expect({ label, tool: viaStdio[i] }).toEqual({ label, tool });
        expect(stdio.getServerVersion()).toEqual(http.getServerVersion());
        expect(stdio.getInstructions()).toBe(http.getInstructions()!);
      } finally {
        await http.close();
        await stdio.close();
      }
    }
  });

  test("a restricted admin key: every tool it is shown answers valid input without a 403, over REST, /mcp and stdio", async () => {
    const stdio = await connectStdioBridge(server, restricted.secret);
    try {
      const { tools } = await restricted.mcp.listTools();
      for (const listed of tools) {
        const tool = registry.find((t) => t.name === listed.name)!;
        const entry = table[tool.name]!;
        // Valid for this key: what the table allows it, else the tool's usual input. Reads aim at
        // the key's own bucket; changes at unknown ids, so the fixture survives (404, never 403).
        const valid = entry.restricted.find((c) => c.kind === "allowed")?.input ?? entry.input;
        const input = () => (tool.annotations.readOnlyHint ? valid(S) : (withUnknownIds(valid(S), knownIds()) as Input));
        const rest = await callRest(restricted.api, tool, input());
        expect({ tool: tool.name, status: rest.status === 403 ? rest.body : "not 403" }).toEqual({ tool: tool.name, status: "not 403" });
        for (const client of [restricted.mcp, stdio]) {
          const mcp = await callMcp(client, tool, input());
          expect({ tool: tool.name, code: mcp.error?.code === "forbidden" ? mcp.error : "not forbidden" }).toEqual({ tool: tool.name, code: "not forbidden" });
        }
      }
    } finally {
      await stdio.close();
    }
  });

  for (const tool of registry) {
    test(`${tool.name}: allowed exactly per scope, 403 and no change otherwise`, async () => {
      const entry = table[tool.name];
      if (!entry) throw new Error(`${tool.name} has no scope entry: add one to the table in test/hardening/scopes.test.ts`);
      const before = await orgDigest(server, S);
      for (const [scope, key] of keys) {
        if (allows(entry, [scope])) continue;
        const input = entry.input(S);
        const rest = await callRest(key.api, tool, input);
        expect({ scope, status: rest.status, code: rest.body?.error?.code }).toEqual({ scope, status: 403, code: "forbidden" });
        const mcp = await callMcp(key.mcp, tool, input);
        expect({ scope, code: mcp.error?.code }).toEqual({ scope, code: "forbidden" });
        // Refused: audited, reads included, over both surfaces.
        const refusal = [{ action: tool.name, status: 403, org_id: S.org.orgId, error_code: "forbidden" }];
        const mcpRequest = (mcp.error as { requestId?: string } | null)?.requestId;
        expect({ scope, rest: await auditedAs(rest.headers.get("x-request-id")), mcp: await auditedAs(mcpRequest) }).toEqual({ scope, rest: refusal, mcp: refusal });
      }
      expect(await orgDigest(server, S)).toEqual(before);

      // Allowed: past the scope check. Changes aim at unknown ids so the fixture survives.
      for (const [scope, key] of keys) {
        if (!allows(entry, [scope])) continue;
        const probe = () => (tool.annotations.readOnlyHint ? entry.input(S) : (withUnknownIds(entry.input(S), knownIds()) as Input));
        const rest = await callRest(key.api, tool, probe());
        expect({ scope, status: rest.status }).not.toEqual({ scope, status: 403 });
        expect(rest.status).not.toBe(401);
        expect(rest.status).toBeLessThan(502);
        // The audit column: one entry per call of a tool that changes something, whatever its outcome; none for a read.
        const entries = await auditedAs(rest.headers.get("x-request-id"));
        const expected = [{ action: tool.name, status: rest.status, org_id: S.org.orgId, error_code: rest.body?.error?.code ?? null }];
        expect({ scope, tool: tool.name, entries }).toEqual({ scope, tool: tool.name, entries: entry.audit === "calls" ? expected : [] });
        const mcp = await callMcp(key.mcp, tool, probe());
        expect({ scope, code: mcp.error?.code }).not.toEqual({ scope, code: "forbidden" });
      }
    });
  }
});

describe("bucket-restricted key", () => {
  // What a key restricted to the main bucket must never see.
  const hidden = () => [...idsOf(S.other), S.emptyBucketId, S.otherKeyId, S.readKeyId, S.org.adminKey.id, S.serviceCredentialId, S.otherServiceCredentialId, `${S.marker}-other`, S.webhookId];

  for (const tool of registry) {
    test(`${tool.name}: only the key's bucket`, async () => {
      const entry = table[tool.name];
      if (!entry) throw new Error(`${tool.name} has no scope entry: add one to the table in test/hardening/scopes.test.ts`);
      expect(entry.restricted.length).toBeGreaterThan(0);
      for (const c of entry.restricted) {
        const before = c.kind === "refused" ? await orgDigest(server, S) : null;
        const input = c.input(S);
        const rest = await callRest(restricted.api, tool, input);
        const mcp = await callMcp(restricted.mcp, tool, c.kind === "refused" ? input : c.input(S));
        const label = `${tool.name} ${JSON.stringify(input)}`;
        if (c.kind === "refused") {
          expect({ label, status: rest.status, code: rest.body?.error?.code }).toEqual({ label, status: 403, code: "forbidden" });
          expect({ label, code: mcp.error?.code }).toEqual({ label, code: "forbidden" });
          expect(await orgDigest(server, S)).toEqual(before!);
        } else {
          expect({ label, status: (c.status ?? [200]).includes(rest.status) ? "expected" : rest.status, body: rest.body }).toMatchObject({ label, status: "expected" });
          expect({ label, code: mcp.error?.code ?? null }).toEqual({ label, code: c.mcpError ?? null });
          expect({ label, rest: leaked(rest.body, hidden()), mcp: leaked(mcp.body, hidden()) }).toEqual({ label, rest: [], mcp: [] });
        }
      }
    });
  }

  test("lists show the key's bucket", async () => {
    const buckets = await restricted.api.get("/api/buckets");
    expect(buckets.body.data.map((b: { id: string }) => b.id)).toEqual([S.main.bucketId]);
    const media = await restricted.api.get("/api/media");
    expect(media.body.data.map((m: { id: string }) => m.id).sort()).toEqual([S.main.objectId, S.main.object2Id].sort());
    expect(media.body.total).toBe(2);
    const sets = await restricted.api.get("/api/sets");
    expect(sets.body.data.map((s: { id: string }) => s.id)).toEqual([S.main.setId]);
    const boards = await restricted.api.get("/api/storyboards");
    expect(boards.body.data.map((s: { id: string }) => s.id)).toContain(S.main.storyboardId);
    const found = await restricted.api.get(`/api/search?q=${S.marker}`);
    expect(found.body.media.map((m: { bucketId: string }) => m.bucketId)).toEqual(expect.arrayContaining([S.main.bucketId]));
    expect(new Set(found.body.media.map((m: { bucketId: string }) => m.bucketId))).toEqual(new Set([S.main.bucketId]));
    // tag2 is only on the other bucket's object: neither facets nor counts may show it.
    expect(found.body.facets.tags.map((t: { slug: string }) => t.slug)).not.toContain(`${S.marker}-spare`);
    const tags = await restricted.api.get("/api/tags");
    expect(tags.body.data.find((t: { id: string }) => t.id === S.tag2Id).objectCount).toBe(0);
    const events = await restricted.api.get("/api/usage/events");
    expect(events.body.data.length).toBeGreaterThan(0);
    expect(new Set(events.body.data.map((e: { bucketId: string }) => e.bucketId))).toEqual(new Set([S.main.bucketId]));
  });
});
