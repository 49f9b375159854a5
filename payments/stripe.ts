import Stripe from "stripe";
import { errors } from "../domain/core/errors.ts";
import type { Invoice } from "../contract/billing.ts";
import type { PaymentProvider, ProviderEvent } from "../domain/ports/payments.ts";

/** Signatures older than this are refused (Stripe's own default too), so a captured delivery cannot be replayed later. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** The Stripe adapter. `apiUrl` points the SDK elsewhere (stripe-mock, a local fake in tests). */
export class StripePayments implements PaymentProvider {
  readonly name = "stripe";
  private readonly stripe: Stripe;

  constructor(cfg: { secretKey: string; apiUrl: string | null }) {
    const url = cfg.apiUrl ? new URL(cfg.apiUrl) : null;
    const protocol = url?.protocol === "http:" ? "http" : "https";
    this.stripe = new Stripe(cfg.secretKey, {
      maxNetworkRetries: 1,
      timeout: 15_000,
      appInfo: { name: "media-storage" },
      ...(url ? { host: url.hostname, port: url.port || (protocol === "http" ? 80 : 443), protocol } : {}),
    });
  }

  async createCustomer(org: { id: string; name: string }): Promise<string> {
    // The idempotency key makes concurrent first calls for one organization return one customer.
    const customer = await provider(() =>
      this.stripe.customers.create({ name: org.name, metadata: { org_id: org.id } }, { idempotencyKey: `media-storage-customer-${org.id}` }),
    );
    return customer.id;
  }

  async listInvoices(customerId: string, limit: number): Promise<{ data: Invoice[]; hasMore: boolean }> {
    const list = await provider(() => this.stripe.invoices.list({ customer: customerId, limit }));
    return { data: list.data.map(invoiceView), hasMore: list.has_more };
  }

  async portalUrl(customerId: string, returnUrl: string | null): Promise<string> {
    const session = await provider(() => this.stripe.billingPortal.sessions.create({ customer: customerId, ...(returnUrl ? { return_url: returnUrl } : {}) }));
    return session.url;
  }
}

/** Transient provider failures are 503 for our client; anything else is our bug or our configuration (500, logged). */
async function provider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof Stripe.errors.StripeConnectionError || err instanceof Stripe.errors.StripeAPIError || err instanceof Stripe.errors.StripeRateLimitError) {
      throw errors.unavailable("The payment provider is unavailable; retry shortly");
    }
    throw err;
  }
}

const iso = (seconds: unknown): string | null => (typeof seconds === "number" ? new Date(seconds * 1000).toISOString() : null);

function invoiceView(i: Stripe.Invoice): Invoice {
  return {
    id: i.id ?? "",
    number: i.number ?? null,
    status: i.status ?? null,
    currency: i.currency,
    amountDueCents: i.amount_due,
    amountPaidCents: i.amount_paid,
    createdAt: iso(i.created)!,
    periodStart: iso(i.period_start),
    periodEnd: iso(i.period_end),
    hostedInvoiceUrl: i.hosted_invoice_url ?? null,
    invoicePdfUrl: i.invoice_pdf ?? null,
  };
}

/**
 * Verifies `Stripe-Signature` (t=..., v1=...; any matching v1 is accepted) over the raw body
 * with the endpoint secret, refusing timestamps older than the tolerance, then reduces the
 * event to what billing acts on. Every refusal is a 400 that says why.
 */
export async function verifyStripeEvent(raw: Uint8Array, header: string | null, secret: string, now: Date): Promise<ProviderEvent> {
  if (!header) throw errors.badRequest("Missing Stripe-Signature header", { reason: "missing" });
  let event: Stripe.Event;
  try {
    event = await Stripe.webhooks.constructEventAsync(raw, header, secret, WEBHOOK_TOLERANCE_SECONDS, undefined, now.getTime());
  } catch (err) {
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) {
      const reason = /tolerance/i.test(err.message) ? "stale" : /extract timestamp/i.test(err.message) ? "malformed" : "mismatch";
      const message = { stale: "Stripe-Signature timestamp is older than 300 seconds", malformed: "Malformed Stripe-Signature header", mismatch: "No Stripe-Signature v1 signature matches the body" }[reason];
      throw errors.badRequest(message, { reason });
    }
    if (err instanceof SyntaxError) throw errors.badRequest("The signed body is not valid JSON", { reason: "body" });
    throw err;
  }
  // The library only refuses signatures older than the tolerance; one dated later than it is
  // refused too (a signature made for the future would outlive a rotated secret's overlap).
  const signedAt = Number(/(?:^|,)\s*t=(\d+)/.exec(header)?.[1]);
  if (Number.isFinite(signedAt) && signedAt * 1000 > now.getTime() + WEBHOOK_TOLERANCE_SECONDS * 1000) {
    throw errors.badRequest(`Stripe-Signature timestamp is more than ${WEBHOOK_TOLERANCE_SECONDS} seconds in the future`, { reason: "future" });
  }
  // Signed is not the same as well formed: without an id and a type there is nothing to record or apply.
  const e: unknown = event;
  if (!e || typeof e !== "object" || Array.isArray(e) || !str((e as Loose).id) || !str((e as Loose).type)) {
    throw errors.badRequest("The signed body is not an event: an object with an id and a type", { reason: "body" });
  }
  const problem = malformedField(e as Loose);
  if (problem) throw errors.badRequest(`The signed event is malformed: ${problem}`, { reason: "body" });
  return toProviderEvent(event);
}

/** Seconds since the epoch up to the year 9999: what a Date and PostgreSQL can hold. */
const MAX_EPOCH_SECONDS = 253_402_300_799;
const storable = (s: string) => s.length <= 255 && s.isWellFormed() && !/\p{Cc}/u.test(s);

/**
 * The fields billing reads, checked before anything is stored: a refusal is a 400, which
 * tells the provider to stop redelivering, where a failed insert (a NUL in the id, a date
 * out of range, an amount of 1e400) was a 500 it retried forever.
 */
function malformedField(e: Loose): string | null {
  if (!storable(e.id as string)) return "id must be at most 255 characters of text without control characters";
  if (!storable(e.type as string)) return "type must be at most 255 characters of text without control characters";
  if (!Number.isSafeInteger(e.created) || (e.created as number) < 0 || (e.created as number) > MAX_EPOCH_SECONDS) return "created must be a Unix time in seconds";
  const o = obj(obj(e.data).object);
  const items = Array.isArray(obj(o.items).data) ? (obj(o.items).data as unknown[]).map(obj) : [];
  const times = [o.current_period_start, o.current_period_end, ...items.flatMap((i) => [i.current_period_start, i.current_period_end])];
  for (const t of times) {
    if (t !== undefined && t !== null && (!Number.isSafeInteger(t) || (t as number) < 0 || (t as number) > MAX_EPOCH_SECONDS)) return "period bounds must be Unix times in seconds";
  }
  for (const name of ["amount_paid", "amount_due"] as const) {
    const v = o[name];
    if (v !== undefined && v !== null && !Number.isSafeInteger(v)) return `${name} must be an integer number of cents`;
  }
  for (const v of [o.id, o.customer, o.currency, obj(o.customer).id, obj(o.metadata).org_id, obj(o.metadata).tier_key, o.status]) {
    if (typeof v === "string" && !storable(v)) return "identifiers must be at most 255 characters of text without control characters";
  }
  return null;
}

// Payload shapes move between API versions (periods went from subscriptions to their items,
// invoice.subscription_details into invoice.parent), so the fields are read defensively.
type Loose = Record<string, unknown>;
const obj = (v: unknown): Loose => (v && typeof v === "object" ? (v as Loose) : {});
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const idOf = (v: unknown): string | null => str(v) ?? str(obj(v).id);

export function toProviderEvent(event: Stripe.Event): ProviderEvent {
  const o = obj(event.data?.object);
  const base = { id: event.id, type: event.type, created: new Date(event.created * 1000), customerId: idOf(o.customer), orgIdHint: str(obj(o.metadata).org_id) };
  switch (event.type) {
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted": {
      const items = (obj(o.items).data as unknown[] | undefined)?.map(obj) ?? [];
      const prices = items.map((i) => obj(i.price));
      const first = items[0] ?? {};
      return {
        ...base,
        kind: "subscription",
        subscription: {
          id: str(o.id) ?? "",
          status: str(o.status) ?? "active",
          ended: event.type === "customer.subscription.deleted",
          priceIds: prices.map((p) => str(p.id)).filter((x): x is string => x !== null),
          lookupKeys: prices.map((p) => str(p.lookup_key)).filter((x): x is string => x !== null),
          tierKeyHint: str(obj(o.metadata).tier_key),
          periodStart: dateOf(first.current_period_start ?? o.current_period_start),
          periodEnd: dateOf(first.current_period_end ?? o.current_period_end),
        },
      };
    }
    case "invoice.paid":
    case "invoice.payment_failed": {
      const subscriptionMeta = obj(obj(obj(o.parent).subscription_details).metadata);
      const legacyMeta = obj(obj(o.subscription_details).metadata);
      const paid = event.type === "invoice.paid";
      return {
        ...base,
        orgIdHint: base.orgIdHint ?? str(subscriptionMeta.org_id) ?? str(legacyMeta.org_id),
        kind: "invoice",
        paid,
        invoice: { id: str(o.id) ?? "", amountCents: Number((paid ? o.amount_paid : o.amount_due) ?? 0), currency: str(o.currency) ?? "usd" },
      };
    }
    default:
      return { ...base, kind: "other" };
  }
}

function dateOf(seconds: unknown): Date | null {
  return typeof seconds === "number" ? new Date(seconds * 1000) : null;
}
