/**
 * `npm run search:reindex`: rebuilds the external search index (Meilisearch) from the
 * database, in batches. With the default PostgreSQL search there is nothing to rebuild.
 */
import { and, asc, gt, isNull } from "drizzle-orm";
import { databaseLocation, loadConfig } from "../app/config.ts";
import { createLogger } from "../app/log.ts";
import { openSearch } from "../app/search.ts";
import { openDatabase } from "../db/client.ts";
import { mediaObjects } from "../db/schema/index.ts";

const config = loadConfig();
const log = createLogger(config.logLevel);
const database = await openDatabase(databaseLocation(config));
const search = await openSearch(config, database.db, log);
if (!search.sync) {
  log.info("search uses PostgreSQL full text; nothing to reindex");
} else {
  let after = "00000000-0000-0000-0000-000000000000";
  let total = 0;
  for (;;) {
    const batch = await database.db
      .select({ id: mediaObjects.id })
      .from(mediaObjects)
      .where(and(isNull(mediaObjects.deletedAt), gt(mediaObjects.id, after)))
      .orderBy(asc(mediaObjects.id))
      .limit(1000);
    if (batch.length === 0) break;
    await search.sync(batch.map((b) => b.id));
    total += batch.length;
    after = batch[batch.length - 1]!.id;
    log.info("reindexed", { total });
  }
  log.info("reindex complete", { total });
}
await database.close();
