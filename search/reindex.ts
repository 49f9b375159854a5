/**
 * `npm run search:reindex`: rebuilds the external search index (Meilisearch) from the
 * database, in batches, then removes the documents of objects the catalogue no longer has.
 * With the default PostgreSQL search there is nothing to rebuild.
 */
import { and, asc, gt, isNull } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { mediaObjects } from "../db/schema/index.ts";
import type { Logger } from "../domain/ports/log.ts";
import type { SearchBackend } from "../domain/ports/search.ts";

const BATCH = 1000;

/** What a backend must do for a rebuild: write documents, and remove those of objects that are gone. */
type Rebuildable = SearchBackend & { sync(ids: string[]): Promise<void>; prune(): Promise<number> };

function rebuildable(search: SearchBackend): search is Rebuildable {
  return typeof search.sync === "function" && typeof (search as Partial<Rebuildable>).prune === "function";
}

/** Writes every live object's document, then removes the stale ones; null when the backend keeps no index of its own. */
export async function reindex(db: Db, search: SearchBackend, log: Logger): Promise<{ written: number; removed: number } | null> {
  if (!rebuildable(search)) {
    log.info("search uses PostgreSQL full text; nothing to reindex");
    return null;
  }
  let after = "00000000-0000-0000-0000-000000000000";
  let written = 0;
  for (;;) {
    const batch = await db
      .select({ id: mediaObjects.id })
      .from(mediaObjects)
      .where(and(isNull(mediaObjects.deletedAt), gt(mediaObjects.id, after)))
      .orderBy(asc(mediaObjects.id))
      .limit(BATCH);
    if (batch.length === 0) break;
    await search.sync(batch.map((b) => b.id));
    written += batch.length;
    after = batch[batch.length - 1]!.id;
    log.info("reindexed", { total: written });
  }
  // After the writes: a document is removed only when its object is not live now.
  const removed = await search.prune();
  log.info("reindex complete", { total: written, removed });
  return { written, removed };
}

if (import.meta.main) {
  const { databaseLocation, loadConfig } = await import("../app/config.ts");
  const { createLogger } = await import("../app/log.ts");
  const { openSearch } = await import("../app/search.ts");
  const { openDatabase } = await import("../db/client.ts");
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const database = await openDatabase(databaseLocation(config));
  await reindex(database.db, await openSearch(config, database.db, log), log);
  await database.close();
}
