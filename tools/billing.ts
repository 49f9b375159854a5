import { z } from "zod";
import { autoCapacity, billingPortal, capacityPurchase, invoiceList, MAX_CAPACITY_GB, subscription } from "../contract/billing.ts";

import { addCapacity, downgrade, getSubscription, listInvoices, portalUrl, setAutoCapacity } from "../domain/billing/billing.ts";
import { defineTool } from "./define.ts";

export const billingTools = [
  defineTool({
    name: "billing_subscription_get",
    title: "Get the subscription",
    description: "The plan, its status, storage, auto-capacity, this month's spend, plans on offer.",
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
    description: "Buys gb GiB of storage on top of the plan; allocatedStorage grows at once.",
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
    description: "Auto-capacity: when enabled, reaching thresholdPct of allocated storage buys incrementGb, up to maxMonthlySpendCents a month.",
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
    description: "Moves to a plan that costs no more (upgrades: billing portal); conflict if used storage exceeds it.",
    scope: "admin",
    reach: "organization",
    http: { method: "POST", path: "/billing/downgrade" },
    annotations: { destructiveHint: true },
    input: z.object({ tierKey: z.string().min(1).max(40).describe("Plan key, from billing_subscription_get") }),
    output: subscription,
    errors: ["conflict"],
    handler: (input, { deps, caller }) => downgrade(deps, caller, input),
  }),
  defineTool({
    name: "billing_invoices_list",
    title: "List invoices",
    description: "Invoices, newest first. not_configured without a payment provider.",
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
    description: "A short-lived URL of the payment provider's customer portal; not_configured without one.",
    scope: "admin",
    reach: "organization",
    http: { method: "GET", path: "/billing/portal" },
    // A GET, but the first call creates the provider's customer.
    annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: true },
    input: z.object({ returnUrl: z.url().max(2048).optional().describe("Where the portal returns to; default: this service") }),
    output: billingPortal,
    errors: ["not_configured", "unavailable"],
    handler: (input, { deps, caller }) => portalUrl(deps, caller, input),
  }),
];
