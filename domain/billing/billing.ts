import { and, eq, gte, isNull, lt, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { AutoCapacitySettings, BillingPortal, CapacityPurchase, Invoice, PlanOffer, Subscription } from "../../contract/billing.ts";
import { billingAccounts, billingCharges, organizations, orgUsage } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { findPlan, freeTier, GB, type Plan } from "./plans.ts";
import type { PaymentProvider } from "../ports/payments.ts";
import { type Page, page } from "../core/pagination.ts";
import { liveUsage, snapshotDay, type UsageCounters } from "../usage/counters.ts";
import { recordUsageEvent } from "../usage/events.ts";
import type { ObjectStored } from "../media/lifecycle.ts";
import { emitEvent } from "../events/emit.ts";
import { announceThresholds } from "../usage/thresholds.ts";
import { foldStorage } from "../usage/storage-deltas.ts";

type Account = typeof billingAccounts.$inferSelect;
type UsageRow = typeof orgUsage.$inferSelect;

const planView = (p: Plan): PlanOffer => ({
  key: p.key,
  name: p.name,
  includedStorage: p.includedStorage,
  priceCents: p.priceCents,
  capacityPriceCentsPerGb: p.capacityPriceCentsPerGb,
});

const autoView = (a: Account): AutoCapacitySettings => ({
  enabled: a.autoCapacityEnabled,
  incrementGb: a.autoCapacityIncrementGb,
  thresholdPct: a.autoCapacityThresholdPct,
  maxMonthlySpendCents: a.autoCapacityMaxMonthlySpendCents,
});

/**
 * The account's plan. A key no longer in the configuration keeps working: it is shown with
 * the storage it grants and no price, so removing a tier never strands an organization.
 */
function planOf(deps: Pick<Deps, "config">, account: Account, usage?: Pick<UsageRow, "allocatedStorage">): Plan {
  return (
    findPlan(deps.config.plans, account.planKey) ?? {
      key: account.planKey,
      name: account.planKey,
      includedStorage: usage ? Math.max(usage.allocatedStorage - account.extraStorage, 0) : 0,
      priceCents: 0,
      capacityPriceCentsPerGb: 0,
      stripePriceId: null,
    }
  );
}

/** Calendar month (UTC) of a moment: the window of the spend cap, and the default billing period. */
function monthWindow(now: Date): { start: Date; end: Date } {
  return { start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)) };
}

/** An account row, made on first use for organizations that predate billing. */
async function ensureAccount(db: Db, deps: Pick<Deps, "config">, orgId: string, lock = false): Promise<Account> {
  await db.insert(billingAccounts).values({ orgId, planKey: freeTier(deps.config.plans).key }).onConflictDoNothing();
  const q = db.select().from(billingAccounts).where(eq(billingAccounts.orgId, orgId));
  const [account] = lock ? await q.for("update") : await q;
  return account!;
}

/**
 * Every billing writer locks in this one order, the usage row and then the account, so they
 * never deadlock with each other or with confirm (whose counter UPDATE takes the usage row first).
 */
export async function lockBilling(tx: Db, deps: Pick<Deps, "config" | "clock">, orgId: string): Promise<{ usage: UsageRow; account: Account }> {
  await tx.select({ orgId: orgUsage.orgId }).from(orgUsage).where(eq(orgUsage.orgId, orgId)).for("update");
  // Pending confirms and deletes are folded in, so the decision sees the counters exactly.
  const usage = await foldStorage(tx, orgId, deps.clock.now());
  if (!usage) throw errors.notFound("Organization");
  return { usage, account: await ensureAccount(tx, deps, orgId, true) };
}

async function monthSpend(tx: Db, orgId: string, now: Date): Promise<number> {
  const { start, end } = monthWindow(now);
  const [row] = await tx
    .select({ cents: sql<string | number | null>`sum(${billingCharges.amountCents})` })
    .from(billingCharges)
    .where(and(eq(billingCharges.orgId, orgId), gte(billingCharges.createdAt, start), lt(billingCharges.createdAt, end)));
  return Number(row?.cents ?? 0);
}

/** Sets the allocation and records the day's state; the caller holds the usage row lock (`before` is what it read). */
async function setAllocation(tx: Db, orgId: string, before: UsageCounters, allocatedStorage: number, now: Date): Promise<UsageCounters> {
  const [row] = await tx.update(orgUsage).set({ allocatedStorage, updatedAt: sql`now()` }).where(eq(orgUsage.orgId, orgId)).returning();
  await snapshotDay(tx, orgId, now, row!);
  // A smaller allocation can put used storage over a line without a byte being added.
  await announceThresholds(tx, orgId, before, row!, now);
  return row!;
}

/** Buys `gb` of capacity for the organization: allocation, charge and ledger move together. */
async function buyCapacity(
  tx: Db,
  deps: Pick<Deps, "config">,
  locked: { usage: UsageCounters; account: Account },
  gb: number,
  kind: "capacity" | "auto_capacity",
  now: Date,
  details: Record<string, unknown> = {},
): Promise<CapacityPurchase> {
  const orgId = locked.account.orgId;
  const plan = planOf(deps, locked.account);
  const bytes = gb * GB;
  const amountCents = gb * plan.capacityPriceCentsPerGb;
  const after = await setAllocation(tx, orgId, locked.usage, locked.usage.allocatedStorage + bytes, now);
  const [account] = await tx
    .update(billingAccounts)
    .set({ extraStorage: sql`${billingAccounts.extraStorage} + ${bytes}`, updatedAt: now })
    .where(eq(billingAccounts.orgId, orgId))
    .returning();
  const [charge] = await tx.insert(billingCharges).values({ orgId, kind, gb, amountCents, createdAt: now }).returning({ id: billingCharges.id });
  await recordUsageEvent(tx, orgId, {
    type: kind === "capacity" ? "capacity_added" : "auto_capacity",
    at: now,
    bytes,
    delta: bytes,
    amountCents,
    details: { gb, chargeId: charge!.id, planKey: plan.key, allocatedStorage: after.allocatedStorage, ...details },
  });
  await emitEvent(tx, { orgId, type: "billing.capacity_added", at: now, data: { gb, allocatedStorage: after.allocatedStorage, chargeId: charge!.id, automatic: kind === "auto_capacity" } });
  return { gb, addedStorage: bytes, amountCents, chargeId: charge!.id, allocatedStorage: after.allocatedStorage, extraStorage: account!.extraStorage };
}

export async function addCapacity(deps: Deps, caller: Caller, input: { gb: number }): Promise<CapacityPurchase> {
  const now = deps.clock.now();
  const bought = await deps.db.transaction(async (tx) => buyCapacity(tx, deps, await lockBilling(tx, deps, caller.orgId), input.gb, "capacity", now));
  deps.jobs.kick();
  return bought;
}

/**
 * Auto-capacity, run inside a confirm's transaction after its counter UPDATE (so the
 * usage row is locked and `after` is current): when the confirm grew usage to thresholdPct of
 * the allocation or beyond, incrementGb is bought, unless this month's capacity charges plus
 * its price would pass maxMonthlySpendCents. Concurrent confirms run this one after another,
 * each seeing the allocation the previous one left, so one crossing buys once.
 */
/** Auto-capacity is weighed after every recorded object that grew used storage. */
export async function autoCapacityAfterStore(e: ObjectStored): Promise<void> {
  if (e.object.size <= (e.previous?.size ?? 0)) return;
  // Read without locks first: most confirms are of organizations without auto-capacity, or
  // below its threshold, and must not take the account's row (nor wait for it).
  const [account] = await e.tx.select().from(billingAccounts).where(eq(billingAccounts.orgId, e.orgId));
  if (!account?.autoCapacityEnabled) return;
  const live = await liveUsage(e.tx, e.orgId);
  if (!live || BigInt(live.usedStorage) * 100n < BigInt(account.autoCapacityThresholdPct) * BigInt(live.allocatedStorage)) return;
  // Near the line: confirms of the organization now run this one after another (the fold
  // takes the usage row's lock), each seeing the allocation the previous one left.
  const after = await foldStorage(e.tx, e.orgId, e.at);
  if (after) await applyAutoCapacity(e.deps, e.tx, e.orgId, after, e.at);
}

export async function applyAutoCapacity(deps: Pick<Deps, "config" | "log">, tx: Db, orgId: string, after: UsageCounters, now: Date): Promise<void> {
  const [account] = await tx.select().from(billingAccounts).where(eq(billingAccounts.orgId, orgId)).for("update");
  if (!account?.autoCapacityEnabled) return;
  if (BigInt(after.usedStorage) * 100n < BigInt(account.autoCapacityThresholdPct) * BigInt(after.allocatedStorage)) return;
  const price = account.autoCapacityIncrementGb * planOf(deps, account).capacityPriceCentsPerGb;
  const spent = await monthSpend(tx, orgId, now);
  if (spent + price > account.autoCapacityMaxMonthlySpendCents) {
    deps.log.info("auto-capacity skipped: monthly spend cap", { orgId, spent, price, cap: account.autoCapacityMaxMonthlySpendCents });
    return;
  }
  await buyCapacity(tx, deps, { usage: after, account }, account.autoCapacityIncrementGb, "auto_capacity", now, {
    thresholdPct: account.autoCapacityThresholdPct,
    usedStorage: after.usedStorage,
    allocatedBefore: after.allocatedStorage,
  });
}

export async function setAutoCapacity(deps: Deps, caller: Caller, s: AutoCapacitySettings): Promise<AutoCapacitySettings> {
  await ensureAccount(deps.db, deps, caller.orgId);
  const [account] = await deps.db
    .update(billingAccounts)
    .set({
      autoCapacityEnabled: s.enabled,
      autoCapacityIncrementGb: s.incrementGb,
      autoCapacityThresholdPct: s.thresholdPct,
      autoCapacityMaxMonthlySpendCents: s.maxMonthlySpendCents,
      updatedAt: deps.clock.now(),
    })
    .where(eq(billingAccounts.orgId, caller.orgId))
    .returning();
  return autoView(account!);
}

export async function getSubscription(deps: Deps, caller: Caller): Promise<Subscription> {
  const now = deps.clock.now();
  const account = await ensureAccount(deps.db, deps, caller.orgId);
  const [usage, spent] = await Promise.all([
    liveUsage(deps.db, caller.orgId),
    monthSpend(deps.db, caller.orgId, now),
  ]);
  if (!usage) throw errors.notFound("Organization");
  const plan = planOf(deps, account, usage);
  const month = monthWindow(now);
  return {
    plan: planView(plan),
    status: account.status,
    includedStorage: plan.includedStorage,
    extraStorage: account.extraStorage,
    allocatedStorage: usage.allocatedStorage,
    usedStorage: usage.usedStorage,
    currentPeriod: {
      start: (account.currentPeriodStart ?? month.start).toISOString(),
      end: (account.currentPeriodEnd ?? month.end).toISOString(),
    },
    autoCapacity: autoView(account),
    capacitySpentThisMonthCents: spent,
    provider: { name: deps.payments?.name ?? null, customerId: account.providerCustomerId, subscriptionId: account.providerSubscriptionId },
    plans: deps.config.plans.map(planView),
  };
}

/**
 * Moves the organization to `target`: the allocation becomes the target's included storage
 * plus the capacity it bought. The caller holds the billing locks and has decided it may.
 */
export async function switchPlan(
  tx: Db,
  locked: { usage: UsageRow; account: Account },
  target: Plan,
  now: Date,
  details: Record<string, unknown>,
): Promise<void> {
  const { usage, account } = locked;
  const allocated = target.includedStorage + account.extraStorage;
  await setAllocation(tx, account.orgId, usage, allocated, now);
  await tx.update(billingAccounts).set({ planKey: target.key, updatedAt: now }).where(eq(billingAccounts.orgId, account.orgId));
  await emitEvent(tx, {
    orgId: account.orgId,
    type: "billing.plan_changed",
    at: now,
    data: { from: account.planKey, to: target.key, allocatedStorage: allocated, source: details.source === "provider" ? "provider" : "api" },
  });
  await recordUsageEvent(tx, account.orgId, {
    type: "plan_changed",
    at: now,
    delta: allocated - usage.allocatedStorage,
    details: { from: account.planKey, to: target.key, allocatedStorage: allocated, ...details },
  });
}

/**
 * 409 when current usage exceeds what the target plan would allocate. "Exceeds" compares used storage
 * with what the organization would be allocated on the target: its included storage plus the
 * capacity bought, which stays with the organization. Only cheaper (or equally priced) tiers
 * are reachable here; upgrades go through the payment provider.
 */
export async function downgrade(deps: Deps, caller: Caller, input: { tierKey: string }): Promise<Subscription> {
  const target = findPlan(deps.config.plans, input.tierKey);
  if (!target) {
    throw errors.validation([{ path: "tierKey", message: `Unknown plan; one of: ${deps.config.plans.map((p) => p.key).join(", ")}` }]);
  }
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const locked = await lockBilling(tx, deps, caller.orgId);
    const { usage, account } = locked;
    if (account.planKey === target.key) return;
    const current = findPlan(deps.config.plans, account.planKey);
    if (current && target.priceCents > current.priceCents) {
      throw errors.conflict(`'${target.key}' costs more than the current plan '${current.key}': upgrade through the billing portal`, {
        currentPlan: current.key,
        targetPlan: target.key,
      });
    }
    const allocated = target.includedStorage + account.extraStorage;
    if (usage.usedStorage > allocated) {
      throw errors.conflict(`Current usage exceeds what plan '${target.key}' allows: delete objects or buy capacity first`, {
        usedStorage: usage.usedStorage,
        targetStorage: allocated,
        includedStorage: target.includedStorage,
        extraStorage: account.extraStorage,
      });
    }
    await switchPlan(tx, locked, target, now, { source: "api" });
  });
  deps.jobs.kick();
  return getSubscription(deps, caller);
}

function provider(deps: Deps): PaymentProvider {
  if (!deps.payments) throw errors.notConfigured("The payment provider is not configured (STRIPE_SECRET_KEY is unset)");
  return deps.payments;
}

/** The provider's invoices for the organization; none before it has a customer there. */
export async function listInvoices(deps: Deps, caller: Caller, q: { limit: number }): Promise<Page<Invoice>> {
  const payments = provider(deps);
  const account = await ensureAccount(deps.db, deps, caller.orgId);
  if (!account.providerCustomerId) return page([], 0, 0);
  const { data, hasMore } = await payments.listInvoices(account.providerCustomerId, q.limit);
  // The provider does not count its lists: total is what is known, hasMore says if more exist.
  return { data, total: data.length, hasMore };
}

/**
 * The organization's provider customer, created on first need. The provider call is
 * idempotent per organization, so concurrent first calls get the same customer; the first
 * to store it wins either way.
 */
async function ensureCustomer(deps: Deps, payments: PaymentProvider, orgId: string): Promise<string> {
  const account = await ensureAccount(deps.db, deps, orgId);
  if (account.providerCustomerId) return account.providerCustomerId;
  const [org] = await deps.db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, orgId));
  const customerId = await payments.createCustomer({ id: orgId, name: org?.name ?? orgId });
  await deps.db
    .update(billingAccounts)
    .set({ providerCustomerId: customerId, updatedAt: deps.clock.now() })
    .where(and(eq(billingAccounts.orgId, orgId), isNull(billingAccounts.providerCustomerId)));
  const [stored] = await deps.db.select({ id: billingAccounts.providerCustomerId }).from(billingAccounts).where(eq(billingAccounts.orgId, orgId));
  return stored!.id!;
}

export async function portalUrl(deps: Deps, caller: Caller, input: { returnUrl?: string | undefined }): Promise<BillingPortal> {
  const payments = provider(deps);
  const customerId = await ensureCustomer(deps, payments, caller.orgId);
  const url = await payments.portalUrl(customerId, input.returnUrl ?? deps.config.publicUrl);
  return { url, customerId };
}
