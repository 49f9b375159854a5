import type { Deps } from "../domain/core/deps.ts";

/**
 * A `search.sync` job writes objects' documents to Meilisearch. Only a process with
 * MEILISEARCH_URL enqueues one, but any worker may run it: one started without the variable
 * (a worker not yet reconfigured while the API instances already use Meilisearch) used to
 * complete the job having written nothing, and the documents were silently missing. It fails
 * instead, naming the setting: the job is retried (by a worker that has it, during a rolling
 * change), then kept among the failed jobs, and its failures are counted and logged.
 */
export async function syncSearch(deps: Pick<Deps, "search">, objectIds: string[]): Promise<void> {
  if (!deps.search.sync) {
    throw new Error(
      `search.sync of ${objectIds.length} object(s) reached a process without MEILISEARCH_URL (its search is ${deps.search.name}); set it on every worker, then run npm run search:reindex to write what was missed`,
    );
  }
  await deps.search.sync(objectIds);
}
