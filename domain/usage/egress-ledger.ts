import { sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Logger } from "../ports/log.ts";

export interface EgressEvent {
  kind: "download" | "stream" | "render";
  at: Date;
  objectId: string;
  bucketId: string;
  key: string;
  bytes: number;
}

/** Events kept for a later write while the database refuses them; past this the oldest go. */
const MAX_KEPT = 100_000;
/** After a failed write the next comes this much later (or with a read's flush), not every interval. */
const RETRY_MS = 5_000;

/**
 * Egress events of download and stream URLs and of renders answered with their bytes,
 * gathered in memory and appended to the ledger (`usage_events`, flagged for the rollup) in
 * one statement at most `intervalMs` after the first of them, or as soon as `batchSize` are
 * waiting. Appending one row per URL was most of
 * PostgreSQL's work on that route: with it the route ran at 1.09x Supabase Storage's
 * throughput, batched at 2.3x (bench/notes/2026-11-29-summary-tables.md).
 *
 * The price, documented in docs/billing.md: a process that dies without its shutdown loses the
 * egress of its last `intervalMs`, and another instance's reads see an event up to `intervalMs`
 * late. Reads on this instance call flush() first, so they stay exact here. Events of an
 * organization deleted meanwhile are dropped, as its ledger is.
 */
export class EgressLedger {
  private pending: { orgId: string; e: EgressEvent }[] = [];
  /** The waiting render event of each organization and object, which later renders add to. */
  private renders = new Map<string, EgressEvent>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Writes run one after another, so flush() also waits for one under way. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    readonly intervalMs = 250,
    readonly batchSize = 1_000,
  ) {}

  /** Events added and not yet written. */
  get waiting(): number {
    return this.pending.length;
  }

  add(orgId: string, e: EgressEvent): void {
    // A cached render answers in about a millisecond and a page of thumbnails asks for dozens:
    // one event per object and batch, with their bytes summed, is what the ledger needs of them.
    if (e.kind === "render") {
      const key = `${orgId}|${e.objectId}`;
      const waiting = this.renders.get(key);
      if (waiting) {
        waiting.bytes += e.bytes;
        return;
      }
      e = { ...e };
      this.renders.set(key, e);
    }
    this.pending.push({ orgId, e });
    if (this.pending.length >= this.batchSize) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.intervalMs);
      this.timer.unref?.();
    }
  }

  /** Writes everything added so far; resolves once it is in the ledger (or kept after a failure). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    this.renders.clear();
    if (batch.length) this.writing = this.writing.then(() => this.write(batch));
    return this.writing;
  }

  private async write(batch: { orgId: string; e: EgressEvent }[]): Promise<void> {
    for (let i = 0; i < batch.length; i += this.batchSize) {
      const chunk = batch.slice(i, i + this.batchSize);
      const rows = chunk.map(({ orgId, e }) => ({ org_id: orgId, type: e.kind, at: e.at.toISOString(), object_id: e.objectId, bucket_id: e.bucketId, key: e.key, bytes: e.bytes }));
      try {
        // One parameter for the whole batch; organizations deleted since are left out.
        await this.db.execute(sql`
          insert into usage_events (org_id, type, at, object_id, bucket_id, key, bytes, rollup_pending)
          select e.org_id, e.type, e.at, e.object_id, e.bucket_id, e.key, e.bytes, true
            from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
              as e(org_id uuid, type text, at timestamptz, object_id uuid, bucket_id uuid, key text, bytes bigint)
           where exists (select 1 from organizations o where o.id = e.org_id)`);
      } catch (err) {
        if (!refused(err)) return this.keep(batch.slice(i), err);
        this.log.warn("egress events refused by the database; dropped", { events: chunk.length, error: String(err) });
      }
    }
  }

  /** What a write could not take is tried again RETRY_MS later (or with a read's flush). */
  private keep(rest: { orgId: string; e: EgressEvent }[], err: unknown): void {
    this.log.warn("writing egress events failed; they are kept for the next write", { events: rest.length, error: String(err) });
    this.pending = [...rest, ...this.pending].slice(-MAX_KEPT);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.flush(), RETRY_MS);
    this.timer.unref?.();
  }
}

/** The rows themselves were refused (an integrity constraint, SQLSTATE class 23): writing them again cannot help. */
function refused(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } } | null;
  return (e?.code ?? e?.cause?.code ?? "").startsWith("23");
}
