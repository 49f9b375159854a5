import { z } from "zod";
import { bytes, id, timestamp } from "./common.ts";

/** Where an import by URL is: queued, then fetching, then stored (the object exists) or failed. */
export const IMPORT_STATES = ["queued", "fetching", "stored", "failed"] as const;

export const mediaImport = z
  .object({
    id: id("Import"),
    bucketId: id("Bucket"),
    key: z.string(),
    url: z.string().describe("The URL asked for (redirects are followed from it)"),
    state: z.enum(IMPORT_STATES).describe("queued, fetching, then stored (objectId is set) or failed (error says why)"),
    bytesReceived: bytes("Received so far"),
    totalBytes: bytes("Expected size, from the declared size or the server's Content-Length").nullable(),
    contentType: z.string().nullable(),
    objectId: id("Media object").nullable().describe("The stored object, once state is stored"),
    error: z.object({ code: z.string(), message: z.string() }).nullable().describe("Why it failed"),
    createdAt: timestamp("Creation time"),
    updatedAt: timestamp("Last change"),
  })
  .meta({ id: "MediaImport" });
export type MediaImport = z.output<typeof mediaImport>;
