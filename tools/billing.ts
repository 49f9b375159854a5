import { z } from "zod";
import { autoCapacity, billingPortal, capacityPurchase, invoiceList, MAX_CAPACITY_GB, subscription } from "../contract/billing.ts";

import { addCapacity, downgrade, getSubscription, listInvoices, portalUrl, setAutoCapacity } from "../domain/billing/billing.ts";
import { defineTool } from "./define.ts";

export const billingTools = [
  defineTool({
    name: "billing_subscription_get",
    title: "Get the subscription",
    description: "The plan and its status, storage included and bought, billing period, auto-capacity, this month's capacity spend, and the plans on offer.",
    scope: "admin",
    reach: "organization",
    http: { method: "GET", path: "/billing/subscription" },
    input: z.object({}),
    output: subscription,
    handler: (_input, { deps, caller }) => getSubscription(deps, caller),
  }),
  defineTool({
    name: "billing_capacity_add",
    title: "Add storage capacity",
    description: "Buys gb GiB of storage on top of the plan at its capacity price; allocatedStorage grows at once.",
    scope: "admin",
    reach: "organization",
    http: { method: "POST", path: "/billing/capacity/add" },
    // Spends money.
    annotations: { destructiveHint: true },
    input: z.object({ gb: z.number().int().min(1).max(MAX_CAPACITY_GB).describe("GiB to add") }),
    output: capacityPurchase,
    handler: (input, { deps, caller }) => addCapacity(deps, caller, input),
  }),
  defineTool({
    name: "billing_capacity_auto_set",
    title: "Set auto-capacity",
    description: "Stores the auto-capacity settings: when enabled, an upload bringing used storage to thresholdPct of allocated buys incrementGb, within maxMonthlySpendCents a month.",
    scope: "admin",
    reach: "organization",
    http: { method: "PUT", path: "/billing/capacity/auto" },
    input: autoCapacity,
    output: autoCapacity,
    handler: (input, { deps, caller }) => setAutoCapacity(deps, caller, input),
  }),
  defineTool({
    name: "billing_downgrade",
    title: "Downgrade the plan",
    description: "Moves to a plan that costs no more. conflict when used storage exceeds what it would allocate, or when it costs more (upgrade in the billing portal).",
    scope: "admin",
    reach: "organization",
    http: { method: "POST", path: "/billing/downgrade" },
    annotations: { destructiveHint: true },
    input: z.object({ tierKey: z.string().min(1).max(40).describe("The plan's key (billing_subscription_get lists them)") }),
    output: subscription,
    errors: ["conflict"],
    handler: (input, { deps, caller }) => downgrade(deps, caller, input),
  }),
  defineTool({
    name: "billing_invoices_list",
    title: "List invoices",
    description: "The payment provider's invoices, newest first. not_configured without a provider.",
    scope: "admin",
    reach: "organization",
    http: { method: "GET", path: "/billing/invoices" },
    annotations: { openWorldHint: true },
    input: z.object({ limit: z.number().int().min(1).max(100).default(20).describe("Page size") }),
    output: invoiceList,
    errors: ["not_configured", "unavailable"],
    handler: (input, { deps, caller }) => listInvoices(deps, caller, input),
  }),
  defineTool({
    name: "billing_portal_get",
    title: "Open the billing portal",
    description: "A short-lived URL of the payment provider's customer portal. not_configured without a provider.",
    scope: "admin",
    reach: "organization",
    http: { method: "GET", path: "/billing/portal" },
    // A GET, but the first call creates the provider's customer.
    annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: true },
    input: z.object({ returnUrl: z.url().max(2048).optional().describe("Where the portal sends the user back; default: this service") }),
    output: billingPortal,
    errors: ["not_configured", "unavailable"],
    handler: (input, { deps, caller }) => portalUrl(deps, caller, input),
  }),
];
