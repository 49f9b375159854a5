import { z } from "zod";
import { pageInput } from "../contract/common.ts";
import { USAGE_EVENT_TYPES, usageEventList, usageHistory, usageSummary } from "../contract/usage.ts";
import { listUsageEvents } from "../domain/usage/events.ts";
import { getUsage, usageHistory as usageHistoryOf } from "../domain/usage/report.ts";
import { defineTool } from "./define.ts";

/** docs/billing.md: the window of history and events, in UTC days ending today. */
export const DEFAULT_DAYS = 30;
export const MAX_DAYS = 365;

const days = z.number().int().min(1).max(MAX_DAYS).default(DEFAULT_DAYS).describe(`UTC days ending today (today counts), 1..${MAX_DAYS}, default ${DEFAULT_DAYS}`);

export const usageTools = [
  defineTool({
    name: "usage_get",
    title: "Get usage",
    description:
      "The organization's usage summary: storage used, reserved by unconfirmed uploads and allocated (bytes), live object count, " +
      "egress (bytes of downloads and streams issued) and API calls this calendar month (UTC), and the plan key. " +
      "API calls are written in batches every few seconds, so the newest calls may not show yet.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/usage" },
    input: z.object({}),
    output: usageSummary,
    handler: (_input, { deps, caller }) => getUsage(deps, caller),
  }),
  defineTool({
    name: "usage_history",
    title: "Usage history",
    description:
      "One point per UTC day, oldest first, ending today: storage used and allocated and object count as the day closed, and that day's egress and API calls. " +
      "Days without activity repeat the previous day's storage; days before the organization existed are left out.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/usage/history" },
    input: z.object({ days }),
    output: usageHistory,
    handler: (input, { deps, caller }) => usageHistoryOf(deps, caller, input.days),
  }),
  defineTool({
    name: "usage_events_list",
    title: "List usage events",
    description:
      "The usage ledger, newest first: uploads confirmed (with the size change on overwrite), objects deleted and purged, downloads and streams (egress), " +
      "capacity added, auto-capacity fired, plan and subscription changes, invoices paid or failed.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/usage/events" },
    input: z.object({ days, type: z.enum(USAGE_EVENT_TYPES).optional().describe("Only events of this type"), ...pageInput }),
    output: usageEventList,
    handler: (input, { deps, caller }) => listUsageEvents(deps, caller, input),
  }),
];
