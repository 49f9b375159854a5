import { z } from "zod";

/** What reconcile found of one kind: how many, how many bytes, and the first few, to look at. */
export const reconcileFindings = z
  .object({
    count: z.number().int().describe("How many were found"),
    bytes: z.number().int().describe("Their total size, bytes"),
    samples: z
      .array(
        z.object({
          path: z.string().describe("Storage path: <bucketId>/<key>, or _derivatives/<bucketId>/<objectId>/<file>"),
          size: z.number().int().nullable().describe("Bytes in storage, or the size the row records"),
          objectId: z.string().nullable().describe("The media object concerned, when there is one"),
        }),
      )
      .describe("The first ones found, at most 20"),
  })
  .meta({ id: "ReconcileFindings" });

const counters = z.object({
  usedStorage: z.number().int().describe("Bytes of live objects"),
  objectCount: z.number().int().describe("Live objects"),
  reservedStorage: z.number().int().describe("Bytes reserved by uploads not yet confirmed"),
});

/** One organization's part of a reconcile run. */
export const reconcileReport = z
  .object({
    orgId: z.string(),
    name: z.string(),
    fix: z.boolean().describe("Whether repairs were made (fix) or only reported"),
    startedAt: z.string(),
    finishedAt: z.string(),
    scanned: z.object({
      storageObjects: z.number().int().describe("Objects listed in storage, derivatives included"),
      storageBytes: z.number().int(),
      rows: z.number().int().describe("Catalogue rows compared: object keys and derivative files"),
    }),
    bytesWithoutRow: reconcileFindings.describe(
      "Bytes in storage that no row knows: uploads PUT but never confirmed, and derivative files no row points to. Objects written after the run started are left out",
    ),
    rowsWithoutBytes: reconcileFindings.describe("Live media objects, and ready thumbnails, whose bytes are not in storage"),
    derivativesWithoutSource: reconcileFindings.describe("Derivative files of objects that no longer exist"),
    staleLabels: reconcileFindings.describe(
      "Media objects whose tags and categories as their views show them disagree with their links (the database keeps them current; only a write that bypassed its triggers leaves them so). Sizes are the objects'",
    ),
    pendingUploads: z.object({ count: z.number().int(), bytes: z.number().int() }).describe("Bytes of uploads still within their reservation: not a problem"),
    usage: z.object({
      consistent: z.boolean(),
      recorded: counters.describe("The organization's usage counters"),
      counted: counters.describe("The same, counted from the rows"),
      buckets: z.array(z.object({ bucketId: z.string(), recorded: z.number().int(), counted: z.number().int() })).describe("Buckets whose object count disagrees"),
    }),
    fixed: z.object({
      deletedObjects: z.number().int().describe("Storage objects deleted (bytes without a row, derivatives without a source)"),
      deletedBytes: z.number().int(),
      regeneratedThumbnails: z.number().int().describe("Ready thumbnails without bytes, set to pending and queued again"),
      usageRepaired: z.boolean().describe("Counters set to what the rows say"),
      relabeledObjects: z.number().int().describe("Objects whose shown tags and categories were rewritten from their links"),
    }),
    notes: z.array(z.string()).describe("What was left alone, and why"),
  })
  .meta({ id: "ReconcileReport", description: "One organization's reconcile report" });

export type ReconcileReport = z.output<typeof reconcileReport>;
export type ReconcileFindings = z.output<typeof reconcileFindings>;
