import type { Invoice } from "../../contract/billing.ts";

/** The payment provider as the domain needs it (Stripe in payments/stripe.ts). Money in cents. */

export interface PaymentProvider {
  readonly name: string;
  /** Creates the customer for an organization. Idempotent per organization for at least a day. */
  createCustomer(org: { id: string; name: string }): Promise<string>;
  listInvoices(customerId: string, limit: number): Promise<{ data: Invoice[]; hasMore: boolean }>;
  /** A short-lived URL of the provider's customer portal. */
  portalUrl(customerId: string, returnUrl: string | null): Promise<string>;
}

/**
 * A verified provider event, reduced to what billing acts on. The adapter builds it from the
 * provider's payload; the domain never sees provider types.
 */
interface EventBase {
  /** The provider's event id: the deduplication key. */
  id: string;
  /** The provider's event type, as sent. */
  type: string;
  created: Date;
  /** The provider's customer, and the organization id the sender put in metadata (org_id). */
  customerId: string | null;
  orgIdHint: string | null;
}

export interface SubscriptionEvent extends EventBase {
  kind: "subscription";
  subscription: {
    id: string;
    status: string;
    /** True for a deleted subscription: the organization falls back to the free tier. */
    ended: boolean;
    /** Ways a subscription names its plan: price ids, price lookup keys, metadata.tier_key. */
    priceIds: string[];
    lookupKeys: string[];
    tierKeyHint: string | null;
    periodStart: Date | null;
    periodEnd: Date | null;
  };
}

export interface InvoiceEvent extends EventBase {
  kind: "invoice";
  paid: boolean;
  invoice: { id: string; amountCents: number; currency: string };
}

export interface OtherEvent extends EventBase {
  kind: "other";
}

export type ProviderEvent = SubscriptionEvent | InvoiceEvent | OtherEvent;
