import { z } from "zod";
import { USAGE_EVENT_TYPES } from "../db/schema/index.ts";
import { listUsageEvents } from "../domain/usage/events.ts";
import { getUsage, usageHistory } from "../domain/usage/report.ts";
import { defineTool } from "./define.ts";
import { id, listOf, pageInput, timestamp } from "./schemas.ts";

/** docs/billing.md: the window of history and events, in UTC days ending today. */
export const DEFAULT_DAYS = 30;
export const MAX_DAYS = 365;

const bytes = (what: string) => z.number().int().describe(`${what}, bytes`);
const days = z.number().int().min(1).max(MAX_DAYS).default(DEFAULT_DAYS).describe(`UTC days ending today (today counts), 1..${MAX_DAYS}, default ${DEFAULT_DAYS}`);

const usageEvent = z.object({
  id: id("Usage event"),
  type: z.enum(USAGE_EVENT_TYPES),
  at: timestamp("When it happened"),
  objectId: id("Media object").nullable(),
  bucketId: id("Bucket").nullable(),
  key: z.string().nullable().describe("Object key, for object events"),
  bytes: z.number().int().nullable().describe("Object size, egress or capacity added, bytes"),
  delta: z.number().int().nullable().describe("Change of used storage (objects) or allocated storage (capacity, plans), bytes"),
  amountCents: z.number().int().nullable().describe("Charge or payment, cents"),
  details: z.record(z.string(), z.unknown()),
});

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
    output: z.object({
      usedStorage: bytes("Confirmed objects"),
      reservedStorage: bytes("Declared sizes of uploads not yet confirmed"),
      allocatedStorage: bytes("Plan storage plus purchased capacity"),
      objectCount: z.number().int().describe("Live (not deleted) objects"),
      egressThisMonth: bytes("Sizes of objects whose download or stream URL was issued this month"),
      apiCallsThisMonth: z.number().int().describe("Authenticated REST and MCP requests this month"),
      month: z.string().describe("The month counted, YYYY-MM (UTC)"),
      plan: z.string().describe("Key of the organization's plan"),
    }),
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
    output: z.object({
      from: z.string().describe("First day of the window, YYYY-MM-DD"),
      to: z.string().describe("Last day (today, UTC), YYYY-MM-DD"),
      data: z.array(
        z.object({
          date: z.string().describe("YYYY-MM-DD (UTC)"),
          usedStorage: bytes("Used at the end of the day"),
          allocatedStorage: bytes("Allocated at the end of the day"),
          objectCount: z.number().int(),
          egressBytes: bytes("Egress that day"),
          apiCalls: z.number().int().describe("API calls that day"),
        }),
      ),
    }),
    handler: (input, { deps, caller }) => usageHistory(deps, caller, input.days),
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
    output: listOf(usageEvent),
    handler: (input, { deps, caller }) => listUsageEvents(deps, caller, input),
  }),
];
