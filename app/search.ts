import type { Db } from "../db/client.ts";
import type { Logger } from "../domain/ports/log.ts";
import type { SearchBackend } from "../domain/ports/search.ts";
import { PostgresSearch } from "../search/postgres.ts";
import type { Config } from "./config.ts";

/**
 * PostgreSQL full text unless MEILISEARCH_URL is set. `searchDb`: the pool PostgreSQL searches
 * run on (openPool, with SEARCH_STATEMENT_TIMEOUT_MS on its connections); without one they run
 * on `db`, setting their deadline in a transaction of their own.
 */
export async function openSearch(config: Config, db: Db, log: Logger, kind: "postgres" | "pglite" = "postgres", searchDb: Db | null = null): Promise<SearchBackend> {
  if (!config.meilisearch) {
    if (searchDb) return new PostgresSearch(searchDb);
    return new PostgresSearch(db, kind === "postgres" ? config.searchStatementTimeoutMs : 0);
  }
  const { MeiliSearchBackend } = await import("../search/meilisearch.ts");
  const backend = new MeiliSearchBackend(
    { url: config.meilisearch.url, key: config.meilisearch.key, indexPrefix: config.redisPrefix, exactUpTo: config.searchExactLimit },
    db,
    log,
  );
  await backend.ensureIndex();
  return backend;
}
