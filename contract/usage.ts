import { z } from "zod";
import { bytes, id, listOf, timestamp } from "./common.ts";

/** Kinds of entries in the usage ledger. */
export const USAGE_EVENT_TYPES = [
  "upload_confirmed",
  "object_deleted",
  "object_purged",
  "object_restored",
  "download",
  "stream",
  "render",
  "capacity_added",
  "auto_capacity",
  "plan_changed",
  "subscription_updated",
  "invoice_paid",
  "invoice_payment_failed",
] as const;
export type UsageEventType = (typeof USAGE_EVENT_TYPES)[number];

/** Storage and egress in bytes; calls and objects are counts. */
export const usageSummary = z
  .object({
    usedStorage: bytes("Confirmed objects"),
    reservedStorage: bytes("Declared sizes of uploads not yet confirmed"),
    allocatedStorage: bytes("Plan storage plus purchased capacity"),
    objectCount: z.number().int().describe("Live (not deleted) objects"),
    egressThisMonth: bytes("Sizes of objects whose download or stream URL was issued this month"),
    apiCallsThisMonth: z.number().int().describe("Authenticated REST and MCP requests this month"),
    month: z.string().describe("The month counted, YYYY-MM (UTC)"),
    plan: z.string().describe("Key of the organization's plan"),
  })
  .meta({ id: "UsageSummary" });
export type UsageSummary = z.output<typeof usageSummary>;

export const usagePoint = z
  .object({
    date: z.string().describe("YYYY-MM-DD (UTC)"),
    usedStorage: bytes("Used at the end of the day"),
    allocatedStorage: bytes("Allocated at the end of the day"),
    objectCount: z.number().int(),
    egressBytes: bytes("Egress that day"),
    apiCalls: z.number().int().describe("API calls that day"),
  })
  .meta({ id: "UsagePoint" });
export type UsagePoint = z.output<typeof usagePoint>;

export const usageHistory = z
  .object({
    from: z.string().describe("First day of the window, YYYY-MM-DD"),
    to: z.string().describe("Last day (today, UTC), YYYY-MM-DD"),
    data: z.array(usagePoint),
  })
  .meta({ id: "UsageHistory" });
export type UsageHistory = z.output<typeof usageHistory>;

export const usageEvent = z
  .object({
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
  })
  .meta({ id: "UsageEvent" });
export type UsageEvent = z.output<typeof usageEvent>;

export const usageEventList = listOf(usageEvent);
