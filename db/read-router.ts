import type { Db } from "./client.ts";

/**
 * What a read is for, as far as replicas care: "data" (lists, gets), "search" (the full-text
 * statement, on the replicas' search pools), "usage" (usage reports, which must also count the
 * egress this instance recorded for the organization).
 */
export type ReadPurpose = "data" | "search" | "usage";

/**
 * Where reads that may be a moment behind the primary go (db/replicas.ts): a streaming replica
 * that is within the lag bound, unless the organization wrote within that bound, so a caller
 * always reads its own writes. Only reads named so may go to a replica; every other statement,
 * and anything inside a transaction, stays on `deps.db`.
 */
export interface ReadRouter {
  /** A fresh replica's handle for this read of the organization's, or null: read from the primary. */
  replicaFor(orgId: string, purpose: ReadPurpose): Db | null;
  /**
   * The organization wrote (`usage`: only egress was recorded): those reads stay on the primary
   * for the lag bound after the write commits, which is at most `commitsWithinMs` from now.
   */
  wrote(orgId: string, what?: "data" | "usage", commitsWithinMs?: number): void;
}
