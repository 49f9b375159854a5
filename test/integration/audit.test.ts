import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { AuditWriter, recordAudit } from "../../domain/audit/audit-writer.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import { newOrg, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * The audit log: who changed what, and every refused call, per organization; read
 * by admins with filters and a cursor; nothing but ids of what a call carried, so never a
 * secret; entries past the retention go. Which tools write entries: the audit column of
 * test/hardening/scopes.test.ts.
 */

let server: TestServer;
let org: TestOrg;

withServerAndOrg({ server: { env: { AUDIT_RETENTION_DAYS: "30" } }, ready: (made) => void ({ server, org } = made) });

const audit = async (query = "", o = org) => {
  const res = await o.admin.get(`/api/audit${query}`);
  expect(res.status).toBe(200);
  return res.body as { data: any[]; hasMore: boolean; nextCursor: string | null };
};

describe("audit log", () => {
  test("an entry says who, what, which ids, from where and how it ended", async () => {
    const bucket = await org.admin.post("/api/buckets", { name: "audited" });
    const [entry] = (await audit("?action=buckets_create")).data;
    expect(entry).toMatchObject({
      action: "buckets_create",
      actor: { type: "api_key", apiKeyId: org.adminKey.id, serviceCredentialId: null, userId: org.userId },
      targets: { id: bucket.body.id },
      status: 201,
      outcome: "succeeded",
      errorCode: null,
      clientAddress: "127.0.0.1",
      requestId: bucket.headers.get("x-request-id"),
    });
    // A failed change and a refused one are kept too; a read is not.
    expect((await org.admin.post("/api/buckets", { name: "audited" })).status).toBe(409);
    const reader = await org.keyClient(["read"]);
    expect((await reader.delete(`/api/buckets/${bucket.body.id}`)).status).toBe(403);
    expect((await reader.get(`/api/api-keys`)).status).toBe(403);
    await org.admin.get(`/api/buckets/${bucket.body.id}`);
    const recent = (await audit("?limit=4")).data;
    expect(recent.map((e) => [e.action, e.status, e.outcome, e.actor.apiKeyId])).toEqual([
      ["api_keys_list", 403, "refused", reader.keyId],
      ["buckets_delete", 403, "refused", reader.keyId],
      // The read key, made by the owner's JWT (keyClient).
      ["api_keys_create", 201, "succeeded", null],
      ["buckets_create", 409, "failed", org.adminKey.id],
    ]);
    expect(recent[1].targets).toEqual({ id: bucket.body.id });
    // A dashboard user is recorded as the user.
    await org.owner.post("/api/tags", { name: "by the owner" });
    expect((await audit("?action=tags_create")).data[0].actor).toEqual({ type: "user", apiKeyId: null, serviceCredentialId: null, userId: org.userId });
  });

  test("MCP calls are audited like REST calls, with the caller's address", async () => {
    const client = await mcpClient(server, org.adminKey.secret, "audit");
    const result = await client.callTool({ name: "tags_create", arguments: { name: "over mcp" } });
    await client.close();
    const tagId = (result.structuredContent as { id: string }).id;
    const [entry] = (await audit(`?targetId=${tagId}`)).data;
    expect(entry).toMatchObject({ action: "tags_create", status: 201, clientAddress: "127.0.0.1", targets: { id: tagId } });
  });

  test("filters and a cursor walk the log newest first, without repeats", async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await org.admin.post("/api/categories", { name: `walk ${i}` })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<typeof audit>> = await audit(`?action=categories_create&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...page.data.map((e) => e.targets.id));
      cursor = page.nextCursor;
      expect(page.hasMore).toBe(cursor !== null);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...made].reverse());
    expect((await audit(`?apiKeyId=${org.adminKey.id}&outcome=refused`)).data).toEqual([]);
    expect((await audit(`?outcome=refused`)).data.length).toBeGreaterThanOrEqual(2);
    expect((await audit(`?from=${new Date(Date.now() + 60_000).toISOString()}`)).data).toEqual([]);
    const bad = await org.admin.get("/api/audit?cursor=not-a-cursor");
    expect(bad.status).toBe(400);
  });

  test("another organization's admin reads only its own log", async () => {
    const other = await newOrg(server, "Elsewhere");
    const theirs = await audit("?limit=200", other);
    expect(theirs.data.every((e) => e.actor.userId === other.userId)).toBe(true);
    expect(JSON.stringify(theirs)).not.toContain(org.adminKey.id);
  });

  test("no secret is ever written: key and webhook secrets, bearer values, request bodies", async () => {
    const key = await org.admin.post("/api/api-keys", { name: "secretive", scopes: ["read"] });
    const rotated = await org.admin.put(`/api/api-keys/${key.body.id}/rotate`);
    const hook = await org.admin.post("/api/webhooks", { url: "http://127.0.0.1:9/never", eventTypes: ["bucket.deleted"], description: "zqdescription" });
    const rotatedHook = await org.admin.put(`/api/webhooks/${hook.body.id}/rotate-secret`);
    await org.admin.put(`/api/webhooks/${hook.body.id}`, { description: "zqchanged" });
    const rows = rowsOf(await server.services.deps.db.execute(sql`select * from audit_log`));
    const text = JSON.stringify(rows);
    for (const secret of [key.body.secret, rotated.body.secret, hook.body.secret, rotatedHook.body.secret, org.adminKey.secret, org.jwt, "zqdescription", "zqchanged", "whsec_"]) {
      expect(text).not.toContain(secret);
    }
    // This organization's: in the services pass the database is shared with every other file.
    expect(rows.filter((r: any) => r.action === "webhooks_rotate_secret" && r.org_id === org.orgId)).toHaveLength(1);
  });

  test("entries past the retention are deleted by maintenance", async () => {
    const at = new Date(Date.now() - 31 * 86_400_000);
    await recordAudit(server.services.deps.db, { orgId: org.orgId, actor: { type: "system" }, action: "ancient_history", targets: {}, status: 200, at });
    expect((await audit("?action=ancient_history")).data).toHaveLength(1);
    await server.services.maintenance.runOnce();
    expect((await audit("?action=ancient_history")).data).toHaveLength(0);
  });

  test("concurrent calls' entries are written together, each call waiting for its own", async () => {
    const writer = new AuditWriter(server.services.deps.db, 1);
    const entries = Array.from({ length: 40 }, (_, i) => ({ orgId: org.orgId, actor: { type: "system" } as const, action: "batched", targets: { n: String(i) }, status: 200 }));
    await Promise.all(entries.map((e) => writer.write(e)));
    // Rows one statement inserted share its transaction id: the first went alone, the rest together.
    const rows = rowsOf<{ n: string; xid: string }>(
      await server.services.deps.db.execute(sql`select targets->>'n' as n, xmin::text as xid from audit_log where org_id = ${org.orgId} and action = 'batched'`),
    );
    expect(rows.map((r) => Number(r.n)).sort((a, b) => a - b)).toEqual(entries.map((_, i) => i));
    expect(new Set(rows.map((r) => r.xid)).size).toBe(2);
  });

  test("entries written without the flush go in batches of their own, each call still waiting for its own", async () => {
    const writer = new AuditWriter(server.services.deps.db, 1);
    const entry = (lane: string, i: number) => ({ orgId: org.orgId, actor: { type: "system" } as const, action: "lanes", targets: { lane, n: String(i) }, status: 200 });
    const calls = Array.from({ length: 10 }, (_, i) => [writer.write(entry("flushed", i)), writer.write(entry("unflushed", i), { flush: false })]).flat();
    await Promise.all(calls);
    const rows = rowsOf<{ lane: string; xid: string }>(
      await server.services.deps.db.execute(sql`select targets->>'lane' as lane, xmin::text as xid from audit_log where org_id = ${org.orgId} and action = 'lanes'`),
    );
    const xids = (lane: string) => new Set(rows.filter((r) => r.lane === lane).map((r) => r.xid));
    expect(rows).toHaveLength(20);
    // Per lane: the first entry alone, the other nine together; no statement mixes the lanes.
    expect([xids("flushed").size, xids("unflushed").size]).toEqual([2, 2]);
    expect([...xids("flushed")].filter((x) => xids("unflushed").has(x))).toEqual([]);
  });

  test("an entry the database refuses costs only its own call: the rest of its batch is written", async () => {
    const writer = new AuditWriter(server.services.deps.db, 1);
    const entry = (orgId: string, n: number) => ({ orgId, actor: { type: "system" } as const, action: "refused_batch", targets: { n: String(n) }, status: 200 });
    const first = writer.write(entry(org.orgId, 0)); // goes alone; the next three wait for it and go together
    const outcomes = await Promise.allSettled([entry(org.orgId, 1), entry("00000000-0000-4000-8000-000000000000", 2), entry(org.orgId, 3)].map((e) => writer.write(e)));
    await first;
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const rows = rowsOf<{ n: string }>(await server.services.deps.db.execute(sql`select targets->>'n' as n from audit_log where action = 'refused_batch' order by 1`));
    expect(rows.map((r) => r.n)).toEqual(["0", "1", "3"]);
  });
});
