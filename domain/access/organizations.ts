import { billingAccounts, organizations, orgUsage } from "../../db/schema/index.ts";
import type { Db } from "../../db/client.ts";
import type { Deps } from "../core/deps.ts";
import { freeTier } from "../billing/plans.ts";
import { snapshotDay } from "../usage/counters.ts";

/**
 * Creates an organization with its usage counters, billing account and first day of usage
 * history, or does nothing if the id exists. Returns whether it was created. Every
 * organization is born on the free tier (the first configured plan).
 */
export async function createOrganization(
  deps: Pick<Deps, "config" | "clock">,
  tx: Db,
  org: { id?: string; name: string },
): Promise<{ id: string; created: boolean }> {
  const [row] = await tx
    .insert(organizations)
    .values({ ...(org.id ? { id: org.id } : {}), name: org.name })
    .onConflictDoNothing()
    .returning({ id: organizations.id });
  if (!row) return { id: org.id!, created: false };
  const plan = freeTier(deps.config.plans);
  const [usage] = await tx.insert(orgUsage).values({ orgId: row.id, allocatedStorage: plan.includedStorage }).returning();
  await tx.insert(billingAccounts).values({ orgId: row.id, planKey: plan.key });
  await snapshotDay(tx, row.id, deps.clock.now(), usage!);
  return { id: row.id, created: true };
}
