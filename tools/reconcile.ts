import { z } from "zod";
import { reconcileReport } from "../contract/reconcile.ts";
import { DEFAULT_OLDER_THAN_MS, reconcileOrganization } from "../domain/reconcile/reconcile.ts";
import { defineTool } from "./define.ts";

export const reconcileTools = [
  defineTool({
    name: "reconcile_run",
    title: "Reconcile storage and catalogue",
    description: "Finds where storage and catalogue disagree (stray or missing bytes, counters). Slow.",
    scope: "admin",
    reach: "organization",
    http: { method: "POST", path: "/reconcile" },
    input: z.object({
      fix: z.boolean().default(false).describe("Also repair what is safe"),
      olderThanHours: z
        .number()
        .int()
        .min(0)
        .max(24 * 30)
        .default(DEFAULT_OLDER_THAN_MS / 3_600_000)
        .describe("With fix: only stray bytes older than this, hours"),
    }),
    output: reconcileReport,
    annotations: { destructiveHint: true, idempotentHint: true },
    handler: (input, { deps, caller }) => reconcileOrganization(deps, caller.orgId, { fix: input.fix, olderThanMs: input.olderThanHours * 3_600_000 }),
  }),
];
