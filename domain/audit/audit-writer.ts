import type { Db } from "../../db/client.ts";
import { appendAudit, type NewAuditEntry } from "./audit.ts";

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
 * statements and commits (bench/RESULTS.md, peer).
 */
export class AuditWriter {
  private waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(
    private readonly db: Db,
    readonly maxInFlight = 2,
    readonly batchSize = 500,
  ) {}

  /** Resolves once the entry is committed; rejects when the database refused or failed it. */
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
    try {
      await appendAudit(this.db, batch.map((w) => w.entry));
      for (const w of batch) w.written();
    } catch (err) {
      if (batch.length === 1) return batch[0]!.failed(err);
      // One entry the database refuses must not cost the others theirs: each is tried alone.
      await Promise.all(batch.map((w) => appendAudit(this.db, [w.entry]).then(w.written, w.failed)));
    }
  }
}
