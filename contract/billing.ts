import { z } from "zod";
import { bytes, id, listOf, timestamp } from "./common.ts";

/** Largest single capacity purchase (and auto-capacity increment), in GB (GiB). */
export const MAX_CAPACITY_GB = 10_240;

export const autoCapacity = z
  .object({
    enabled: z.boolean().describe("Whether auto-capacity buys storage"),
    incrementGb: z.number().int().min(1).max(MAX_CAPACITY_GB).describe("GiB bought each time"),
    thresholdPct: z.number().int().min(1).max(100).describe("Buys when used storage reaches this percentage of allocated"),
    maxMonthlySpendCents: z
      .number()
      .int()
      .min(0)
      .max(1_000_000_000)
      .describe("Cap on this month's capacity charges, cents"),
  })
  .meta({ id: "AutoCapacitySettings" });
export type AutoCapacitySettings = z.output<typeof autoCapacity>;

export const plan = z
  .object({
    key: z.string(),
    name: z.string(),
    includedStorage: bytes("Storage the plan includes"),
    priceCents: z.number().int().describe("Monthly price, cents"),
    capacityPriceCentsPerGb: z.number().int().describe("Price of one GB (GiB) of added capacity, cents"),
  })
  .meta({ id: "Plan" });
/** A plan as offered; the configured tier behind it (with its provider price) is domain/billing/plans.ts's. */
export type PlanOffer = z.output<typeof plan>;

export const subscription = z
  .object({
    plan,
    status: z.string().describe("active, trialing, past_due, canceled, ... (the provider's status; active without a provider)"),
    includedStorage: bytes("Included in the plan"),
    extraStorage: bytes("Capacity bought on top of the plan; kept across plan changes"),
    allocatedStorage: bytes("includedStorage + extraStorage"),
    usedStorage: bytes("Confirmed objects"),
    currentPeriod: z.object({ start: timestamp("Period start"), end: timestamp("Period end") }).describe("The provider's billing period, else the calendar month (UTC)"),
    autoCapacity,
    capacitySpentThisMonthCents: z.number().int().describe("Capacity charges this calendar month (UTC), cents"),
    provider: z.object({ name: z.string().nullable(), customerId: z.string().nullable(), subscriptionId: z.string().nullable() }),
    plans: z.array(plan).describe("Every configured tier"),
  })
  .meta({ id: "Subscription" });
export type Subscription = z.output<typeof subscription>;

export const capacityPurchase = z
  .object({
    gb: z.number().int(),
    addedStorage: bytes("Capacity added"),
    amountCents: z.number().int().describe("Charge, cents"),
    chargeId: id("Charge"),
    allocatedStorage: bytes("Allocated after the purchase"),
    extraStorage: bytes("All capacity bought so far"),
  })
  .meta({ id: "CapacityPurchase" });
export type CapacityPurchase = z.output<typeof capacityPurchase>;

export const invoice = z
  .object({
    id: z.string(),
    number: z.string().nullable(),
    status: z.string().nullable(),
    currency: z.string(),
    amountDueCents: z.number().int(),
    amountPaidCents: z.number().int(),
    createdAt: timestamp("Creation time"),
    periodStart: timestamp("Period start").nullable(),
    periodEnd: timestamp("Period end").nullable(),
    hostedInvoiceUrl: z.string().nullable(),
    invoicePdfUrl: z.string().nullable(),
  })
  .meta({ id: "Invoice" });
export type Invoice = z.output<typeof invoice>;

export const invoiceList = listOf(invoice);

export const billingPortal = z
  .object({ url: z.string().describe("Portal session URL, short-lived"), customerId: z.string() })
  .meta({ id: "BillingPortal" });
export type BillingPortal = z.output<typeof billingPortal>;
