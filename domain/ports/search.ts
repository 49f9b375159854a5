import type { MediaKind } from "../../contract/media.ts";
import type { Facets, SearchMatch } from "../../contract/search.ts";
import type { Db } from "../../db/client.ts";
import type { ParsedQuery } from "../search/query.ts";

/** Filters on the files' facts, every reference resolved (domain/derivatives/facts.ts): what a query needs, for any backend. */
export interface ResolvedFactFilters {
  sha256?: string | undefined;
  /** Matches nothing (duplicates of an object not hashed yet). */
  none?: boolean;
  excludeObjectId?: string | undefined;
  takenFrom?: Date | undefined;
  takenTo?: Date | undefined;
  minWidth?: number | undefined;
  minHeight?: number | undefined;
  minDuration?: number | undefined;
  maxDuration?: number | undefined;
  /** The dominant colour within `tolerance` (delta E) of this one, in CIELAB. */
  color?: { orgId: string; l: number; a: number; b: number; tolerance: number } | undefined;
}

/** A search as the backends receive it: already confined to one organization (and bucket). */
export interface SearchRequest {
  orgId: string;
  query: ParsedQuery;
  /** The bucket filter, or the caller's restricted bucket. */
  bucketId: string | null;
  kind: MediaKind | null;
  /** Objects must carry every one of these tags (by id). */
  tagIds: string[];
  /** Objects must be in each of these groups: a category and its descendants (by id). */
  categoryGroups: string[][];
  sizeMin: number | null;
  sizeMax: number | null;
  dateFrom: Date | null;
  /** Exclusive upper bound. */
  dateBefore: Date | null;
  /** Filters on what the worker found in the files (object_facts); null: none. */
  facts?: ResolvedFactFilters | null;
  limit: number;
  offset: number;
  /**
   * Count, rank and facet at most this many matches (SEARCH_EXACT_LIMIT). Up to it the answer
   * is exact; above it the work stops there, so a search costs the same for a term in 1% of
   * a million objects as for one in half of them.
   */
  exactUpTo: number;
  /**
   * PostgreSQL: a read replica's search connection to run on (domain/core/reads.ts) instead of
   * the backend's own; absent or null: its own. Other backends ignore it.
   */
  replica?: Db | null;
}

export interface SearchHits {
  /** Object ids of the page, best first. */
  ids: string[];
  /** Exact when `totalRelation` is "eq"; otherwise `exactUpTo`, a lower bound. */
  total: number;
  totalRelation: "eq" | "gte";
  facets: Facets;
  facetsApproximate: boolean;
  /** Where each object of the page matched, by id; absent when the backend cannot say. */
  matches?: SearchMatch[];
}

/**
 * Full-text search over media objects. The PostgreSQL backend reads the same database the
 * domain writes (nothing to sync); an external one (Meilisearch) is kept in sync by jobs.
 */
export interface SearchBackend {
  readonly name: "postgres" | "meilisearch";
  /** True when changes must be pushed to the backend by `search.sync` jobs. */
  readonly external: boolean;
  search(req: SearchRequest): Promise<SearchHits>;
  /** External backends: write or remove these objects' documents. */
  sync?(objectIds: string[]): Promise<void>;
}

/** At most this many entries per facet, highest counts first. */
export const FACET_LIMIT = 100;
