import type { Db } from "../db/client.ts";
import type { Logger } from "../domain/ports/log.ts";
import type { SearchBackend } from "../domain/ports/search.ts";
import { PostgresSearch } from "../search/postgres.ts";
import type { Config } from "./config.ts";

/** PostgreSQL full text unless MEILISEARCH_URL is set. */
export async function openSearch(config: Config, db: Db, log: Logger, kind: "postgres" | "pglite" = "postgres"): Promise<SearchBackend> {
  if (!config.meilisearch) return new PostgresSearch(db, kind === "postgres" ? config.searchStatementTimeoutMs : 0);
  const { MeiliSearchBackend } = await import("../search/meilisearch.ts");
  const backend = new MeiliSearchBackend(
    { url: config.meilisearch.url, key: config.meilisearch.key, indexPrefix: config.redisPrefix, exactUpTo: config.searchExactLimit },
    db,
    log,
  );
  await backend.ensureIndex();
  return backend;
}
