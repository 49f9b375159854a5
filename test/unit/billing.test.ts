import { describe, expect, test } from "bun:test";
import type Stripe from "stripe";
import { loadConfig } from "../../app/config.ts";
import { DEFAULT_PLANS, GB, parsePlans } from "../../domain/billing/plans.ts";
import { toProviderEvent } from "../../payments/stripe.ts";

describe("plan configuration", () => {
  test("the default tiers: free 5 GiB first, then pro and business", () => {
    const sut = loadConfig({}).plans;
    expect(sut).toEqual(DEFAULT_PLANS);
    expect(sut.map((p) => p.key)).toEqual(["free", "pro", "business"]);
    expect(sut[0]).toMatchObject({ includedStorage: 5 * GB, priceCents: 0 });
  });

  test("PLANS accepts GiB or bytes, defaults the name, keeps the provider price id", () => {
    const sut = parsePlans(
      JSON.stringify([
        { key: "starter", includedGb: 2, priceCents: 0, capacityPriceCentsPerGb: 12 },
        { key: "team", name: "Team", includedStorage: 1234, priceCents: 900, capacityPriceCentsPerGb: 9, stripePriceId: "price_team" },
      ]),
    );
    expect(sut).toEqual([
      { key: "starter", name: "starter", includedStorage: 2 * GB, priceCents: 0, capacityPriceCentsPerGb: 12, stripePriceId: null },
      { key: "team", name: "Team", includedStorage: 1234, priceCents: 900, capacityPriceCentsPerGb: 9, stripePriceId: "price_team" },
    ]);
  });

  test("a wrong PLANS stops the start with a readable message", () => {
    const tier = { key: "a", includedGb: 1, priceCents: 0, capacityPriceCentsPerGb: 1 };
    const bad: [unknown, RegExp][] = [
      ["not json", /not valid JSON/],
      [[], /PLANS/],
      [[tier, tier], /unique/],
      [[{ ...tier, includedStorage: 5 }], /exactly one of includedGb or includedStorage/],
      [[{ key: "a", priceCents: 0, capacityPriceCentsPerGb: 1 }], /exactly one/],
      [[{ ...tier, key: "Has Space" }], /0\.key/],
      [[{ ...tier, priceCents: -1 }], /0\.priceCents/],
      [[{ ...tier, extra: true }], /PLANS/],
    ];
    for (const [value, message] of bad) {
      const PLANS = typeof value === "string" ? value : JSON.stringify(value);
      expect(() => loadConfig({ PLANS })).toThrow(message);
      expect(() => loadConfig({ PLANS })).toThrow(/^Invalid configuration/);
    }
  });
});

describe("provider events are reduced to what billing reads", () => {
  const event = (type: string, object: Record<string, unknown>) => ({ id: "evt_1", object: "event", type, created: 1_790_000_000, data: { object } }) as unknown as Stripe.Event;

  test("subscriptions: periods from the item (current API) or from the subscription (older API)", () => {
    const current = toProviderEvent(
      event("customer.subscription.updated", {
        id: "sub_1",
        customer: "cus_1",
        status: "past_due",
        metadata: { org_id: "o", tier_key: "pro" },
        items: { data: [{ current_period_start: 100, current_period_end: 200, price: { id: "price_1", lookup_key: "pro" } }] },
      }),
    );
    expect(current).toEqual({
      id: "evt_1",
      type: "customer.subscription.updated",
      created: new Date(1_790_000_000_000),
      customerId: "cus_1",
      orgIdHint: "o",
      kind: "subscription",
      subscription: { id: "sub_1", status: "past_due", ended: false, priceIds: ["price_1"], lookupKeys: ["pro"], tierKeyHint: "pro", periodStart: new Date(100_000), periodEnd: new Date(200_000) },
    });
    const older = toProviderEvent(event("customer.subscription.deleted", { id: "sub_1", customer: { id: "cus_2" }, status: "canceled", current_period_start: 300, current_period_end: 400, items: { data: [] } }));
    expect(older).toMatchObject({ customerId: "cus_2", orgIdHint: null, subscription: { ended: true, periodStart: new Date(300_000), periodEnd: new Date(400_000), priceIds: [] } });
  });

  test("invoices: the organization from the invoice or its subscription's metadata; the amount paid or due", () => {
    const paid = toProviderEvent(event("invoice.paid", { id: "in_1", customer: "cus_1", currency: "eur", amount_paid: 700, amount_due: 700, parent: { subscription_details: { metadata: { org_id: "o1" } } } }));
    expect(paid).toMatchObject({ kind: "invoice", paid: true, orgIdHint: "o1", invoice: { id: "in_1", amountCents: 700, currency: "eur" } });
    const failed = toProviderEvent(event("invoice.payment_failed", { id: "in_2", customer: "cus_1", amount_paid: 0, amount_due: 900, subscription_details: { metadata: { org_id: "o2" } } }));
    expect(failed).toMatchObject({ kind: "invoice", paid: false, orgIdHint: "o2", invoice: { amountCents: 900 } });
    expect(toProviderEvent(event("charge.refunded", {}))).toMatchObject({ kind: "other", type: "charge.refunded" });
  });
});
