import { and, desc, eq, gte, lt, lte, or, type SQL, sql } from "drizzle-orm";
import { auditLog } from "../../db/schema/index.ts";
import type { AuditEntry, AuditPage } from "../../contract/audit.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";

/**
 * The audit log: who did what to which ids, when, from where, and how it ended. Written by the
 * one tool invoker (tools/invoke.ts) for every call of a mutating tool and every refused call,
 * and by the service for what it does by itself (audit-writer.ts). Only ids are kept of what a
 * call carried. Read here.
 */

export const outcomeOf = (status: number): AuditEntry["outcome"] => (status < 400 ? "succeeded" : status === 401 || status === 403 ? "refused" : "failed");

type Row = typeof auditLog.$inferSelect;

const view = (r: Row): AuditEntry => ({
  id: r.id,
  at: r.at.toISOString(),
  actor: { type: r.actorType, apiKeyId: r.apiKeyId, serviceCredentialId: r.serviceCredentialId, userId: r.userId },
  action: r.action,
  targets: r.targets,
  status: r.status,
  outcome: outcomeOf(r.status),
  errorCode: r.errorCode,
  clientAddress: r.clientAddress,
  requestId: r.requestId,
});

/** Opaque to clients: the last entry's time and id, base64url. */
function encodeCursor(r: Row): string {
  return Buffer.from(JSON.stringify([r.at.toISOString(), r.id])).toString("base64url");
}
function decodeCursor(cursor: string): { at: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [string, string];
    const date = new Date(at);
    if (Number.isNaN(date.getTime()) || !/^[0-9a-f-]{36}$/i.test(id)) throw new Error("bad cursor");
    return { at: date, id };
  } catch {
    throw errors.validation([{ path: "cursor", message: "Not a cursor this list returned" }]);
  }
}

export interface AuditQuery {
  action?: string | undefined;
  apiKeyId?: string | undefined;
  userId?: string | undefined;
  targetId?: string | undefined;
  outcome?: AuditEntry["outcome"] | undefined;
  from?: string | undefined;
  to?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** Newest first; `cursor` continues after the last entry of the previous page. */
export async function listAudit(deps: Deps, caller: Caller, q: AuditQuery): Promise<AuditPage> {
  const where: SQL[] = [eq(auditLog.orgId, caller.orgId)];
  if (q.action) where.push(eq(auditLog.action, q.action));
  if (q.apiKeyId) where.push(eq(auditLog.apiKeyId, q.apiKeyId));
  if (q.userId) where.push(eq(auditLog.userId, q.userId));
  if (q.targetId) where.push(sql`jsonb_path_exists(${auditLog.targets}, '$.** ? (@ == $id)', jsonb_build_object('id', ${q.targetId}::text))`);
  if (q.outcome === "succeeded") where.push(lt(auditLog.status, 400));
  if (q.outcome === "refused") where.push(or(eq(auditLog.status, 401), eq(auditLog.status, 403))!);
  if (q.outcome === "failed") where.push(sql`${auditLog.status} >= 400 and ${auditLog.status} not in (401, 403)`);
  if (q.from) where.push(gte(auditLog.at, new Date(q.from)));
  if (q.to) where.push(lte(auditLog.at, new Date(q.to)));
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    where.push(or(lt(auditLog.at, c.at), and(eq(auditLog.at, c.at), lt(auditLog.id, c.id)))!);
  }
  const rows = await deps.db
    .select()
    .from(auditLog)
    .where(and(...where))
    .orderBy(desc(auditLog.at), desc(auditLog.id))
    .limit(q.limit + 1);
  const data = rows.slice(0, q.limit);
  const hasMore = rows.length > q.limit;
  return { data: data.map(view), hasMore, nextCursor: hasMore ? encodeCursor(data[data.length - 1]!) : null };
}

/** Entries past the retention (AUDIT_RETENTION_DAYS) go, a bounded batch per pass. */
export async function pruneAudit(deps: Pick<Deps, "db" | "config" | "clock">): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - deps.config.auditRetentionDays * 86_400_000);
  const gone = await deps.db.execute(sql`
    delete from audit_log where id in (select id from audit_log where at < ${cutoff.toISOString()}::timestamptz limit 10000)`);
  return (gone as unknown as { count?: number; affectedRows?: number }).count ?? (gone as unknown as { affectedRows?: number }).affectedRows ?? 0;
}
