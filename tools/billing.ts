import { z } from "zod";
import { autoCapacity, billingPortal, capacityPurchase, invoiceList, MAX_CAPACITY_GB, subscription } from "../contract/billing.ts";

import { addCapacity, downgrade, getSubscription, listInvoices, portalUrl, setAutoCapacity } from "../domain/billing/billing.ts";
import { defineTool } from "./define.ts";

export const billingTools = [
  defineTool({
    name: "billing_subscription_get",
    title: "Get the subscription",
    description: "The organization's plan, status, included and purchased storage, billing period, auto-capacity settings, this month's capacity spend, and the plans on offer.",
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
    description: `Buys gb GB (GiB) of storage on top of the plan, at the plan's capacity price: allocatedStorage grows at once and the charge is recorded. 1..${MAX_CAPACITY_GB} per call.`,
    scope: "admin",
    reach: "organization",
    http: { method: "POST", path: "/billing/capacity/add" },
    input: z.object({ gb: z.number().int().min(1).max(MAX_CAPACITY_GB).describe(`GB (GiB) to add, 1..${MAX_CAPACITY_GB}`) }),
    output: capacityPurchase,
    handler: (input, { deps, caller }) => addCapacity(deps, caller, input),
  }),
  defineTool({
    name: "billing_capacity_auto_set",
    title: "Set auto-capacity",
    description:
      "Stores the auto-capacity settings (all four fields). When enabled, a confirmed upload that brings used storage to thresholdPct of allocated storage " +
      "buys incrementGb, unless this month's capacity charges plus its price would pass maxMonthlySpendCents.",
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
    description:
      "Moves the organization to a cheaper (or equally priced) plan. 409 conflict when used storage exceeds what the target would allocate " +
      "(its included storage plus capacity already bought), or when the target costs more (upgrade through the billing portal). " +
      "Unknown tierKey: 400. The current plan: no change.",
    scope: "admin",
    reach: "organization",
    http: { method: "POST", path: "/billing/downgrade" },
    input: z.object({ tierKey: z.string().min(1).max(40).describe("Key of the target plan (see billing_subscription_get plans)") }),
    output: subscription,
    errors: ["conflict"],
    handler: (input, { deps, caller }) => downgrade(deps, caller, input),
  }),
  defineTool({
    name: "billing_invoices_list",
    title: "List invoices",
    description: "The payment provider's invoices for the organization, newest first. 501 not_configured when no provider is configured.",
    scope: "admin",
    reach: "organization",
    http: { method: "GET", path: "/billing/invoices" },
    annotations: { openWorldHint: true },
    input: z.object({ limit: z.number().int().min(1).max(100).default(20).describe("1..100, default 20") }),
    output: invoiceList,
    errors: ["not_configured", "unavailable"],
    handler: (input, { deps, caller }) => listInvoices(deps, caller, input),
  }),
  defineTool({
    name: "billing_portal_get",
    title: "Open the billing portal",
    description:
      "A short-lived URL of the payment provider's customer portal (payment methods, invoices, plan changes). The first call creates the organization's customer at the provider. " +
      "501 not_configured when no provider is configured.",
    scope: "admin",
    reach: "organization",
    http: { method: "GET", path: "/billing/portal" },
    // A GET, but the first call creates the provider's customer.
    annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: true },
    input: z.object({ returnUrl: z.url().max(2048).optional().describe("Where the portal sends the user back; default PUBLIC_URL") }),
    output: billingPortal,
    errors: ["not_configured", "unavailable"],
    handler: (input, { deps, caller }) => portalUrl(deps, caller, input),
  }),
];
