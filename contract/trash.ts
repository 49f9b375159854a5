import { z } from "zod";
import { id, listOf, timestamp } from "./common.ts";
import { mediaObject } from "./media.ts";

/**
 * Why a deleted object cannot be restored: another upload has used its key since, and its
 * bytes replaced the deleted object's at that key, so there is nothing to bring back.
 */
export const TRASH_BLOCKERS = ["key_in_use", "key_reused"] as const;
export type TrashBlocker = (typeof TRASH_BLOCKERS)[number];

/** A deleted object in the trash: the media object as it was, and what the trash knows of it. */
export const trashedObject = mediaObject
  .extend({
    deletedAt: timestamp("When it was deleted"),
    restorableUntil: timestamp("After this the purge removes it for good"),
    restorable: z.boolean().describe("False when another upload has used the key since: its bytes replaced these"),
    blockedBy: z
      .enum(TRASH_BLOCKERS)
      .nullable()
      .describe("key_in_use: a live object holds the key now; key_reused: an object uploaded at the key since was deleted too"),
  })
  .meta({ id: "TrashedObject" });
export type TrashedObject = z.output<typeof trashedObject>;

export const trashedObjectList = listOf(trashedObject);

export const purged = z.object({ id: id("Media object"), purged: z.literal(true) }).meta({ id: "Purged" });
export type Purged = z.output<typeof purged>;
