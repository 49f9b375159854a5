import { z } from "zod";

/**
 * What the trash adds to a media object (tools/trash.ts extends the media object's shape with
 * these). `restorable` is false when the key has since been used by another upload: the newer
 * upload's bytes replaced the deleted object's at that key, so there is nothing to bring back.
 */
export const TRASH_BLOCKERS = ["key_in_use", "key_reused"] as const;

export const trashFields = {
  deletedAt: z.iso.datetime().describe("When it was deleted (ISO-8601 UTC)"),
  restorableUntil: z.iso.datetime().describe("After this the purge removes it for good"),
  restorable: z.boolean().describe("False when another upload has used the key since: its bytes replaced these"),
  blockedBy: z
    .enum(TRASH_BLOCKERS)
    .nullable()
    .describe("key_in_use: a live object holds the key now; key_reused: an object uploaded at the key since was deleted too"),
};
