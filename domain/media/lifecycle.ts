import type { Db } from "../../db/client.ts";
import type { Deps } from "../core/deps.ts";
import type { MediaKind } from "./kind.ts";

/**
 * What happens to a media object, told to the other areas (usage, billing, labels,
 * derivatives, search) through hooks that run inside the transaction that made the change:
 * either all of it commits or none of it. Media code knows the list (object-hooks.ts), not
 * what each hook does; an area that must react to objects adds one hook there.
 */
interface ObjectEvent {
  tx: Db;
  deps: Deps;
  at: Date;
  orgId: string;
  bucketId: string;
}

/** Bytes now in storage were recorded as a live object: a confirm, or the worker storing a set rendition. */
export interface ObjectStored extends ObjectEvent {
  object: { id: string; key: string; kind: MediaKind; size: number; etag: string | null };
  /** The live object this replaced at the same key (an overwrite keeps the id), or null for a new object. */
  previous: { size: number } | null;
  /** Labels given at upload; they become the object's tags. */
  uploadTags: string[];
  /** Bytes the upload had reserved, given back as the object is counted. */
  released: number;
}

/** A live object was soft-deleted ("deleted"), or a deleted one's bytes and row are gone for good ("purged"). */
export interface ObjectRemoved extends ObjectEvent {
  how: "deleted" | "purged";
  object: { id: string; key: string; size: number };
}

/** A deleted object came back from the trash, as it was: labels, derivatives and set memberships were kept. */
export interface ObjectRestored extends ObjectEvent {
  object: { id: string; key: string; kind: MediaKind; size: number; etag: string | null };
}

export type ObjectHook<E> = (event: E) => Promise<void>;

export async function runHooks<E>(hooks: readonly ObjectHook<E>[], event: E): Promise<void> {
  for (const hook of hooks) await hook(event);
}
