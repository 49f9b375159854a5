import type { Db } from "../db/client.ts";
import { AuditWriter, type NewAuditEntry } from "../domain/audit/audit-writer.ts";
import type { ReadRouter } from "../domain/core/reads.ts";
import type { Logger } from "../domain/ports/log.ts";
import { type EgressEvent, EgressLedger } from "../domain/usage/egress-ledger.ts";

/**
 * Every tool call that changes something ends with its audit entry, written before the answer
 * (tools/audit-trail.ts): the one place every write of a caller passes, after its transaction
 * committed. Marking the organization there keeps its next reads on the primary
 * (db/replicas.ts), so a caller reads its own writes. Reads inside a writing call never use a
 * replica: only the read tools' own queries go through readDb().
 */
export class ReadYourWritesAudit extends AuditWriter {
  constructor(
    db: Db,
    private readonly reads: ReadRouter,
  ) {
    super(db);
  }

  override write(entry: NewAuditEntry, opts: { flush?: boolean } = {}): Promise<void> {
    this.reads.wrote(entry.orgId);
    return super.write(entry, opts);
  }
}

/**
 * A download URL records egress without an audit entry (it changes nothing the caller sees but
 * usage). Usage answers count this instance's egress (they flush it first), so the
 * organization's usage reads stay on the primary for the lag bound; its lists and gets do not.
 */
export class ReadYourEgress extends EgressLedger {
  constructor(
    db: Db,
    log: Logger,
    private readonly reads: ReadRouter,
  ) {
    super(db, log);
  }

  override add(orgId: string, e: EgressEvent): void {
    // Written with the next batch, within the interval (or by a usage read's flush, sooner).
    this.reads.wrote(orgId, "usage", this.intervalMs);
    super.add(orgId, e);
  }
}
