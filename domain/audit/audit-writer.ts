import { sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Caller } from "../access/caller.ts";
import { preparedSql } from "../core/prepared.ts";

/**
 * Writing the audit log (audit.ts reads it): one entry in the caller's transaction, or the
 * entries of concurrent calls together (AuditWriter).
 */

export type AuditActor =
  | { type: "api_key"; apiKeyId: string; userId: string }
  | { type: "service_credential"; serviceCredentialId: string; userId: string }
  | { type: "user"; userId: string }
  | { type: "system" };

export interface NewAuditEntry {
  orgId: string;
  actor: AuditActor;
  action: string;
  targets: Record<string, string | string[]>;
  status: number;
  errorCode?: string | null;
  clientAddress?: string | null;
  requestId?: string | null;
  at?: Date;
}

export function actorOf(caller: Pick<Caller, "apiKeyId" | "serviceCredentialId" | "userId">): AuditActor {
  if (caller.apiKeyId) return { type: "api_key", apiKeyId: caller.apiKeyId, userId: caller.userId };
  if (caller.serviceCredentialId) return { type: "service_credential", serviceCredentialId: caller.serviceCredentialId, userId: caller.userId };
  return { type: "user", userId: caller.userId };
}

/** One audit row as the batch statement reads it from JSON. */
const rowOf = (e: NewAuditEntry) => ({
  org_id: e.orgId,
  // Milliseconds, as JavaScript dates hold them, so that cursors compare exactly.
  at: (e.at ?? new Date()).toISOString(),
  actor_type: e.actor.type,
  api_key_id: e.actor.type === "api_key" ? e.actor.apiKeyId : null,
  service_credential_id: e.actor.type === "service_credential" ? e.actor.serviceCredentialId : null,
  user_id: e.actor.type === "system" ? null : e.actor.userId,
  action: e.action,
  targets: e.targets,
  status: e.status,
  error_code: e.errorCode ?? null,
  client_address: e.clientAddress ?? null,
  request_id: e.requestId ?? null,
});

// Prepared (see prepared.ts), with the rows as one JSON parameter, so that any number of
// entries is one statement of one plan. Unflushed, the statement also sets its own implicit
// transaction to commit without waiting for the WAL flush, for the entries of calls whose own
// writes are committed that way.
const appendAuditSql = (flush: boolean) => () => sql`
  ${flush ? sql`` : sql`with durability as (select set_config('synchronous_commit', 'off', true))`}
  insert into audit_log (org_id, at, actor_type, api_key_id, service_credential_id, user_id, action, targets, status, error_code, client_address, request_id)
  select e.org_id, e.at, e.actor_type, e.api_key_id, e.service_credential_id, e.user_id, e.action, coalesce(e.targets, '{}'::jsonb), e.status, e.error_code, e.client_address, e.request_id
    from ${flush ? sql`` : sql`durability, `}jsonb_to_recordset(${sql.placeholder("rows")}::text::jsonb)
      as e(org_id uuid, at timestamptz, actor_type text, api_key_id uuid, service_credential_id uuid, user_id uuid, action text,
           targets jsonb, status integer, error_code text, client_address text, request_id text)`;

/**
 * Appends `entries` in one statement, in `db`'s transaction if it is one. `flush: false` (outside
 * a transaction only) commits them without waiting for the WAL flush.
 */
export async function appendAudit(db: Db, entries: readonly NewAuditEntry[], opts: { flush?: boolean } = {}): Promise<void> {
  if (entries.length === 0) return;
  const flush = opts.flush !== false;
  await preparedSql(db, flush ? "append_audit" : "append_audit_unflushed", appendAuditSql(flush)).execute({ rows: JSON.stringify(entries.map(rowOf)) });
}

export function recordAudit(db: Db, e: NewAuditEntry): Promise<void> {
  return appendAudit(db, [e]);
}

interface Waiting {
  entry: NewAuditEntry;
  written: () => void;
  failed: (err: unknown) => void;
}

/**
 * Writes the audit rows of concurrent calls together, and each call still waits for its own
 * row to be committed (so no entry of an answered call is lost in a crash). Nothing waits on
 * a timer: an entry goes out at once when fewer than `maxInFlight` writes are under way, and
 * otherwise with every entry that arrived meanwhile in the next write. Under load, one
 * statement and one commit (one WAL flush, waited on by one pooled connection) carry dozens
 * of rows; one row per call made the audit insert half of the upload URL's database
 * statements and commits (bench/notes/2026-11-28-sixth-sitting.md).
 *
 * Entries written with `flush: false` go in batches of their own, committed without waiting
 * for the WAL flush: for calls whose own writes are committed that way (an upload URL's
 * reservation), the entry is as durable as what it records, and the answer waits for no
 * flush. The flush is the one wait such a call shared with every organization's writes: on a
 * disk whose flushes stall now and then, upload URLs waited 150-380 ms for their entry while
 * reads answered in 10 (bench/notes/2026-11-27-neighbours-sittings.md, tenth sitting).
 */
export class AuditWriter {
  private readonly flushed: Lane;
  private readonly unflushed: Lane;

  constructor(db: Db, maxInFlight = 2, batchSize = 500) {
    this.flushed = new Lane(db, maxInFlight, batchSize, true);
    this.unflushed = new Lane(db, maxInFlight, batchSize, false);
  }

  /** Resolves once the entry is committed; rejects when the database refused or failed it. */
  write(entry: NewAuditEntry, opts: { flush?: boolean } = {}): Promise<void> {
    return (opts.flush === false ? this.unflushed : this.flushed).write(entry);
  }
}

/** One queue of entries and the writes under way for it. */
class Lane {
  private waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(
    private readonly db: Db,
    private readonly maxInFlight: number,
    private readonly batchSize: number,
    private readonly flush: boolean,
  ) {}

  write(entry: NewAuditEntry): Promise<void> {
    return new Promise((written, failed) => {
      this.waiting.push({ entry, written, failed });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.batchSize);
      this.inFlight++;
      void this.append(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async append(batch: Waiting[]): Promise<void> {
    const opts = { flush: this.flush };
    try {
      await appendAudit(this.db, batch.map((w) => w.entry), opts);
      for (const w of batch) w.written();
    } catch (err) {
      if (batch.length === 1) return batch[0]!.failed(err);
      // One entry the database refuses must not cost the others theirs: each is tried alone.
      await Promise.all(batch.map((w) => appendAudit(this.db, [w.entry], opts).then(w.written, w.failed)));
    }
  }
}
