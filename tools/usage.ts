import { z } from "zod";
import { pageInput } from "../contract/common.ts";
import { USAGE_EVENT_TYPES, usageEventList, usageHistory, usageSummary } from "../contract/usage.ts";
import { listUsageEvents } from "../domain/usage/events.ts";
import { getUsage, usageHistory as usageHistoryOf } from "../domain/usage/report.ts";
import { defineTool } from "./define.ts";

/** docs/billing.md: the window of history and events, in UTC days ending today. */
export const DEFAULT_DAYS = 30;
export const MAX_DAYS = 365;

const days = z.number().int().min(1).max(MAX_DAYS).default(DEFAULT_DAYS).describe("Days back, today included");

export const usageTools = [
  defineTool({
    name: "usage_get",
    title: "Get usage",
    description: "Usage now: storage used, reserved, allocated; objects; this month's egress and API calls; plan.",
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
    description: "Per UTC day: storage, objects, egress and API calls.",
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
    description: "The usage ledger (uploads, deletions, downloads, renders, billing), newest first.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/usage/events" },
    input: z.object({ days, type: z.enum(USAGE_EVENT_TYPES).optional().describe("Only this event type"), ...pageInput }),
    output: usageEventList,
    handler: (input, { deps, caller }) => listUsageEvents(deps, caller, input),
  }),
];
