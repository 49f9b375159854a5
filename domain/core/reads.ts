import type { Db } from "../../db/client.ts";
import type { ReadPurpose, ReadRouter } from "../../db/read-router.ts";

export type { ReadPurpose, ReadRouter };

/** The handle for a read that may be served by a replica; the primary when none is configured or fresh. */
export function readDb(deps: { db: Db; reads?: ReadRouter | undefined }, orgId: string, purpose: Exclude<ReadPurpose, "search"> = "data"): Db {
  return deps.reads?.replicaFor(orgId, purpose) ?? deps.db;
}
