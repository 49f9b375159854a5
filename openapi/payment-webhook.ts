/**
 * The payment webhook (rest/webhook.ts) is the one route that is not a tool, so nothing derives
 * it: it is described here, by hand, next to the document that publishes it.
 */
export function paymentWebhookPath(): Record<string, unknown> {
  const error = (description: string) => ({ description, content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } } });
  return {
    "/api/payments/webhook": {
      post: {
        operationId: "payments_webhook",
        summary: "Receive a payment provider event",
        description:
          "For the payment provider (Stripe) only. No credential: the `Stripe-Signature` header over the exact body is checked (a signature older than 5 minutes is refused). " +
          "Outside rate limits, idempotency and metering; events are deduplicated by id, since the provider delivers at least once.",
        tags: ["payments"],
        security: [],
        parameters: [
          { name: "Stripe-Signature", in: "header", required: true, description: "The provider's `t=<unix seconds>,v1=<hex HMAC-SHA256>` signature", schema: { type: "string" } },
        ],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                description: "The provider's event, as sent",
                required: ["id", "type"],
                properties: { id: { type: "string" }, type: { type: "string" }, data: { type: "object" } },
              },
            },
          },
        },
        responses: {
          "200": {
            description: "Received",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["received", "eventId", "outcome"],
                  properties: {
                    received: { type: "boolean", enum: [true] },
                    eventId: { type: "string" },
                    outcome: { type: "string", enum: ["applied", "duplicate", "ignored"], description: "duplicate: seen before; ignored: an event type the service does not act on" },
                  },
                },
              },
            },
          },
          "400": error("`bad_request`: the signature is missing, wrong or too old, or the body is not an event"),
          "413": error("`payload_too_large`: the body is over MAX_BODY_BYTES"),
          "501": error("`not_configured`: STRIPE_WEBHOOK_SECRET is unset"),
          "503": error("`unavailable`: the database is down; the provider retries"),
        },
      },
    },
  };
}
