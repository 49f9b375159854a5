import type { Elysia } from "elysia";
import { applyProviderEvent } from "../domain/billing/webhook.ts";
import type { Deps } from "../domain/core/deps.ts";
import { AppError, errors } from "../domain/core/errors.ts";
import { verifyStripeEvent } from "../payments/stripe.ts";
import { toAppError } from "../tools/failure.ts";
import { errorResponse, json } from "../http/respond.ts";

/**
 * POST /api/payments/webhook, the one route that is not a tool (docs/conventions.md):
 * no credential, verified by the provider's signature over the raw body, outside every
 * guard (idempotency, rate limit, metering). Deduplication by event id happens in billing.
 * Mounted through createApp's `extraRoutes`.
 */
export function paymentWebhook(deps: Deps) {
  return (app: Elysia) => {
    app.post(
      "/api/payments/webhook",
      async ({ request }) => {
        const requestId = crypto.randomUUID();
        try {
          const secret = deps.config.stripe.webhookSecret;
          if (!secret) throw errors.notConfigured("The payment webhook is not configured (STRIPE_WEBHOOK_SECRET is unset)");
          const raw = await readRaw(request, deps.config.maxBodyBytes);
          const event = await verifyStripeEvent(raw, request.headers.get("stripe-signature"), secret, deps.clock.now());
          const outcome = await applyProviderEvent(deps, event);
          return json(200, { received: true, eventId: event.id, outcome }, { "x-request-id": requestId });
        } catch (err) {
          return errorResponse(toAppError(err, deps.log, requestId), requestId, { "x-request-id": requestId });
        }
      },
      // The signature covers the exact bytes sent, so the body must not be parsed first.
      { parse: "none" },
    );
  };
}

async function readRaw(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  const tooLarge = () => new AppError("payload_too_large", `The request body exceeds ${maxBytes} bytes`);
  if (declared > maxBytes) throw tooLarge();
  const raw = new Uint8Array(await request.arrayBuffer());
  if (raw.byteLength > maxBytes) throw tooLarge();
  return raw;
}
