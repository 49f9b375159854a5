import Stripe from "stripe";

/** Small tiers, so tests reach thresholds and plan limits with a few kilobytes. Bytes and cents. */
export const TEST_PLANS = [
  { key: "free", name: "Free", includedStorage: 10_000, priceCents: 0, capacityPriceCentsPerGb: 100 },
  { key: "pro", name: "Pro", includedStorage: 100_000, priceCents: 1_500, capacityPriceCentsPerGb: 50, stripePriceId: "price_pro_monthly" },
  { key: "business", name: "Business", includedStorage: 1_000_000, priceCents: 9_900, capacityPriceCentsPerGb: 25 },
];

export const WEBHOOK_SECRET = "whsec_test_0123456789abcdef";

export const GiB = 1024 ** 3;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A Stripe event payload as the provider sends it (only the fields billing reads, plus the envelope). */
export function stripeEvent(type: string, object: Record<string, unknown>, opts: { id?: string; created?: number } = {}) {
  return {
    id: opts.id ?? `evt_${crypto.randomUUID().replaceAll("-", "")}`,
    object: "event",
    api_version: "2026-10-28.endive",
    created: opts.created ?? nowSeconds(),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

export function subscriptionObject(s: { id?: string; customer: string; orgId?: string; status?: string; price?: string; lookupKey?: string; periodStart?: number; periodEnd?: number }) {
  const start = s.periodStart ?? nowSeconds();
  return {
    id: s.id ?? "sub_test_1",
    object: "subscription",
    customer: s.customer,
    status: s.status ?? "active",
    metadata: s.orgId ? { org_id: s.orgId } : {},
    items: {
      object: "list",
      data: [
        {
          id: "si_1",
          object: "subscription_item",
          price: { id: s.price ?? "price_unknown", object: "price", lookup_key: s.lookupKey ?? null },
          current_period_start: start,
          current_period_end: s.periodEnd ?? start + 30 * 86_400,
        },
      ],
    },
  };
}

export function invoiceObject(i: { id?: string; customer: string; amountPaid?: number; amountDue?: number; orgId?: string }) {
  return {
    id: i.id ?? `in_${crypto.randomUUID().slice(0, 8)}`,
    object: "invoice",
    customer: i.customer,
    currency: "usd",
    amount_paid: i.amountPaid ?? 0,
    amount_due: i.amountDue ?? i.amountPaid ?? 0,
    metadata: i.orgId ? { org_id: i.orgId } : {},
  };
}

/** Signs a body the way Stripe does: `t=<unix seconds>,v1=<HMAC-SHA256 of "t.body">`. */
export async function signatureFor(body: string, opts: { secret?: string; timestamp?: number } = {}): Promise<string> {
  return Stripe.webhooks.generateTestHeaderStringAsync({ payload: body, secret: opts.secret ?? WEBHOOK_SECRET, timestamp: opts.timestamp ?? nowSeconds() });
}

/** POSTs an event to the webhook, signed unless a header is given. */
export async function deliver(baseUrl: string, event: object | string, opts: { signature?: string | null; secret?: string; timestamp?: number } = {}) {
  const body = typeof event === "string" ? event : JSON.stringify(event);
  const signature = opts.signature === undefined ? await signatureFor(body, opts) : opts.signature;
  const res = await fetch(`${baseUrl}/api/payments/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(signature !== null ? { "stripe-signature": signature } : {}) },
    body,
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed, headers: res.headers };
}
