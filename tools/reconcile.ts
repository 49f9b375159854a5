import { z } from "zod";
import { reconcileReport } from "../contract/reconcile.ts";
import { DEFAULT_OLDER_THAN_MS, reconcileOrganization } from "../domain/reconcile/reconcile.ts";
import { defineTool } from "./define.ts";

export const reconcileTools = [
  defineTool({
    name: "reconcile_run",
    title: "Reconcile storage and catalogue",
    description:
      "Walks the organization's storage and catalogue and reports what disagrees: bytes without a row (uploads PUT but never confirmed, stray derivative files), " +
      "rows without bytes, derivatives of objects that no longer exist, and usage counters that differ from the rows. " +
      "With fix=true it deletes the stray bytes older than olderThanHours, makes missing thumbnails again and corrects the counters, and says what it did; " +
      "rows without bytes are only reported. Runs as long as the listing takes: for large organizations prefer `npm run reconcile` on the server.",
    scope: "admin",
    reach: "organization",
    http: { method: "POST", path: "/reconcile" },
    input: z.object({
      fix: z.boolean().default(false).describe("Repair what is safe to repair; default false (report only)"),
      olderThanHours: z
        .number()
        .int()
        .min(0)
        .max(24 * 30)
        .default(DEFAULT_OLDER_THAN_MS / 3_600_000)
        .describe("With fix: only storage objects older than this are deleted (hours, default 24)"),
    }),
    output: reconcileReport,
    annotations: { destructiveHint: true, idempotentHint: true },
    handler: (input, { deps, caller }) => reconcileOrganization(deps, caller.orgId, { fix: input.fix, olderThanMs: input.olderThanHours * 3_600_000 }),
  }),
];
