import { autoCapacityAfterStore } from "../billing/billing.ts";
import { planDerivatives } from "../derivatives/derivatives.ts";
import { applyUploadTags } from "../labels/tags.ts";
import { reindexObject } from "../search/index-rows.ts";
import { countRemovedObject, countStoredObject } from "../usage/object-usage.ts";
import type { ObjectHook, ObjectRemoved, ObjectStored } from "./lifecycle.ts";

/**
 * Who reacts to an object's bytes being recorded, in order: usage before auto-capacity
 * (which reads the new totals), tags before the search index (which holds tag names).
 */
export const onObjectStored: readonly ObjectHook<ObjectStored>[] = [countStoredObject, autoCapacityAfterStore, applyUploadTags, planDerivatives, reindexObject];

/** Who reacts to an object being soft-deleted or purged. */
export const onObjectRemoved: readonly ObjectHook<ObjectRemoved>[] = [countRemovedObject, reindexObject];
