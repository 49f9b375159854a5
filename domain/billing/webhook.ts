import { eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { billingAccounts, organizations, paymentEvents } from "../../db/schema/index.ts";
import { lockBilling, switchPlan } from "./billing.ts";
import type { Deps } from "../core/deps.ts";
import { findPlan, freeTier, type Plan } from "./plans.ts";
import type { InvoiceEvent, ProviderEvent, SubscriptionEvent } from "../ports/payments.ts";
import { recordUsageEvent } from "../usage/events.ts";

export type WebhookOutcome = "applied" | "duplicate" | "ignored";

/** Subscription states in which the organization no longer has the paid plan. */
const ENDED_STATUSES = new Set(["canceled", "incomplete_expired"]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The provider delivers at least once. The event id is claimed in the same
 * transaction as the event's effect: a redelivery, even one running concurrently, waits on
 * the first claim and then finds it taken, so the effect happens once. If the effect fails,
 * the claim rolls back with it and the provider's retry applies it.
 */
export async function applyProviderEvent(deps: Deps, event: ProviderEvent): Promise<WebhookOutcome> {
  const now = deps.clock.now();
  const outcome = await deps.db.transaction(async (tx) => {
    const [claimed] = await tx
      .insert(paymentEvents)
      .values({ eventId: event.id, type: event.type, receivedAt: now })
      .onConflictDoNothing()
      .returning({ eventId: paymentEvents.eventId });
    if (!claimed) return "duplicate";
    if (event.kind === "other") return "ignored";
    const orgId = await organizationOf(tx, event);
    if (!orgId) {
      deps.log.warn("payment event for no known organization; acknowledged and ignored", { eventId: event.id, type: event.type, customerId: event.customerId });
      return "ignored";
    }
    await tx.update(paymentEvents).set({ orgId }).where(eq(paymentEvents.eventId, event.id));
    const locked = await lockBilling(tx, deps, orgId);
    // The first event naming a customer for an organization links them.
    if (event.customerId && !locked.account.providerCustomerId) {
      await tx.update(billingAccounts).set({ providerCustomerId: event.customerId }).where(eq(billingAccounts.orgId, orgId));
    }
    return event.kind === "subscription" ? applySubscription(tx, deps, locked, event, now) : applyInvoice(tx, locked.account.orgId, locked.account.status, event, now);
  });
  // A plan change is announced to webhook endpoints through the job outbox.
  if (outcome === "applied") deps.jobs.kick();
  return outcome;
}

/** By the stored customer id first; else by metadata.org_id, for an organization that exists. */
async function organizationOf(tx: Db, event: ProviderEvent): Promise<string | null> {
  if (event.customerId) {
    const [byCustomer] = await tx.select({ orgId: billingAccounts.orgId }).from(billingAccounts).where(eq(billingAccounts.providerCustomerId, event.customerId));
    if (byCustomer) return byCustomer.orgId;
  }
  if (event.orgIdHint && UUID.test(event.orgIdHint)) {
    const [org] = await tx.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, event.orgIdHint));
    if (org) return org.id;
  }
  return null;
}

/** The configured tier a subscription names: by provider price id, price lookup key, or metadata.tier_key. */
function tierOf(plans: readonly Plan[], s: SubscriptionEvent["subscription"]): Plan | undefined {
  return (
    plans.find((p) => p.stripePriceId !== null && s.priceIds.includes(p.stripePriceId)) ??
    plans.find((p) => s.lookupKeys.includes(p.key)) ??
    (s.tierKeyHint ? findPlan(plans, s.tierKeyHint) : undefined)
  );
}

async function applySubscription(
  tx: Db,
  deps: Deps,
  locked: Awaited<ReturnType<typeof lockBilling>>,
  event: SubscriptionEvent,
  now: Date,
): Promise<WebhookOutcome> {
  const { account } = locked;
  const s = event.subscription;
  // Delivery order is not guaranteed: an event older than the state we hold is stale.
  if (account.providerUpdatedAt && event.created < account.providerUpdatedAt) {
    deps.log.info("older subscription event ignored", { eventId: event.id, orgId: account.orgId });
    return "ignored";
  }
  const ended = s.ended || ENDED_STATUSES.has(s.status);
  const status = s.ended ? "canceled" : s.status;
  // A subscription naming no configured tier keeps the plan the organization has.
  const target = ended ? freeTier(deps.config.plans) : tierOf(deps.config.plans, s);
  await tx
    .update(billingAccounts)
    .set({
      status,
      providerSubscriptionId: s.id,
      currentPeriodStart: s.periodStart,
      currentPeriodEnd: s.periodEnd,
      providerUpdatedAt: event.created,
      updatedAt: now,
    })
    .where(eq(billingAccounts.orgId, account.orgId));
  const details = { source: "provider", eventId: event.id, eventType: event.type, subscriptionId: s.id, status };
  // The provider is authoritative: its plan applies even when usage exceeds it (uploads stop at the quota).
  if (target && target.key !== account.planKey) await switchPlan(tx, locked, target, now, details);
  else await recordUsageEvent(tx, account.orgId, { type: "subscription_updated", at: now, details: { ...details, planKey: account.planKey } });
  return "applied";
}

async function applyInvoice(tx: Db, orgId: string, status: string, event: InvoiceEvent, now: Date): Promise<WebhookOutcome> {
  // A failed payment makes the account past_due; a paid invoice settles it.
  const next = event.paid ? (status === "past_due" || status === "unpaid" ? "active" : status) : "past_due";
  if (next !== status) await tx.update(billingAccounts).set({ status: next, updatedAt: now }).where(eq(billingAccounts.orgId, orgId));
  await recordUsageEvent(tx, orgId, {
    type: event.paid ? "invoice_paid" : "invoice_payment_failed",
    at: now,
    amountCents: event.invoice.amountCents,
    details: { eventId: event.id, invoiceId: event.invoice.id, currency: event.invoice.currency, status: next },
  });
  return "applied";
}
