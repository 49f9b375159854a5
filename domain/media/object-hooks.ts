import { autoCapacityAfterStore } from "../billing/billing.ts";
import { planDerivatives, reportUnrenderable, resumeDerivatives } from "../derivatives/derivatives.ts";
import { announceRemoved, announceRestored, announceStored } from "../events/object-events.ts";
import { applyUploadTags } from "../labels/tags.ts";
import { reindexObject } from "../search/index-rows.ts";
import { planTextExtraction } from "../search/text.ts";
import { countRemovedObject, countRestoredObject, countStoredObject } from "../usage/object-usage.ts";
import type { ObjectHook, ObjectRemoved, ObjectRestored, ObjectStored } from "./lifecycle.ts";

/**
 * Who reacts to an object's bytes being recorded, in order: usage before auto-capacity
 * (which reads the new totals), tags before the search index (which holds tag names);
 * webhook endpoints are told last, of the object before its thumbnail's fate when that is
 * known at once.
 */
export const onObjectStored: readonly ObjectHook<ObjectStored>[] = [
  countStoredObject,
  autoCapacityAfterStore,
  applyUploadTags,
  planDerivatives,
  planTextExtraction,
  reindexObject,
  announceStored,
  reportUnrenderable,
];

/** Who reacts to an object being soft-deleted or purged. */
export const onObjectRemoved: readonly ObjectHook<ObjectRemoved>[] = [countRemovedObject, reindexObject, announceRemoved];

/** Who reacts to a deleted object being restored from the trash. */
export const onObjectRestored: readonly ObjectHook<ObjectRestored>[] = [countRestoredObject, reindexObject, resumeDerivatives, announceRestored];
