import { z } from "zod";

/** Bytes in a gigabyte as plans and capacity count them (GiB). */
export const GB = 1024 ** 3;

/** A plan tier, from configuration (`PLANS`). Storage in bytes, money in cents. */
export interface Plan {
  key: string;
  name: string;
  includedStorage: number;
  /** Monthly price of the plan. */
  priceCents: number;
  /** Price of one GB of added capacity (manual or automatic). */
  capacityPriceCentsPerGb: number;
  /** Provider price id that means this plan in subscription webhooks (optional). */
  stripePriceId: string | null;
}

/**
 * The tiers a deployment offers when `PLANS` is unset. The first tier is where every new
 * organization starts (the free tier).
 */
export const DEFAULT_PLANS: Plan[] = [
  { key: "free", name: "Free", includedStorage: 5 * GB, priceCents: 0, capacityPriceCentsPerGb: 10, stripePriceId: null },
  { key: "pro", name: "Pro", includedStorage: 100 * GB, priceCents: 1_500, capacityPriceCentsPerGb: 8, stripePriceId: null },
  { key: "business", name: "Business", includedStorage: 1_024 * GB, priceCents: 9_900, capacityPriceCentsPerGb: 5, stripePriceId: null },
];

const tierSchema = z
  .object({
    key: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, "1-40 lowercase letters, digits, '_' or '-'"),
    name: z.string().min(1).max(100).optional(),
    // Either unit; GiB is what people write, bytes is what small test tiers need.
    includedGb: z.number().int().min(0).optional(),
    includedStorage: z.number().int().min(0).optional(),
    priceCents: z.number().int().min(0).max(100_000_000),
    capacityPriceCentsPerGb: z.number().int().min(0).max(100_000),
    stripePriceId: z.string().min(1).optional(),
  })
  .strict()
  .refine((t) => (t.includedGb === undefined) !== (t.includedStorage === undefined), "give exactly one of includedGb or includedStorage (bytes)");

const plansSchema = z
  .array(tierSchema)
  .min(1)
  .refine((ts) => new Set(ts.map((t) => t.key)).size === ts.length, "tier keys must be unique");

/** Parses the `PLANS` variable (a JSON array of tiers); throws a readable message when it is wrong. */
export function parsePlans(json: string): Plan[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new Error("PLANS: not valid JSON (expected an array of tiers)");
  }
  const parsed = plansSchema.safeParse(value);
  if (!parsed.success) {
    throw new Error(`PLANS: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`);
  }
  return parsed.data.map((t) => ({
    key: t.key,
    name: t.name ?? t.key,
    includedStorage: t.includedStorage ?? (t.includedGb ?? 0) * GB,
    priceCents: t.priceCents,
    capacityPriceCentsPerGb: t.capacityPriceCentsPerGb,
    stripePriceId: t.stripePriceId ?? null,
  }));
}

/** The tier new organizations start on, and the one a cancelled subscription falls back to. */
export function freeTier(plans: readonly Plan[]): Plan {
  return plans[0]!;
}

export function findPlan(plans: readonly Plan[], key: string): Plan | undefined {
  return plans.find((p) => p.key === key);
}
