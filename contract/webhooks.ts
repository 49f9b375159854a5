import { z } from "zod";
import { id, listOf, timestamp } from "./common.ts";
import { SUBSCRIBABLE_EVENT_TYPES } from "./events.ts";

export const subscribableEventType = z.enum(SUBSCRIBABLE_EVENT_TYPES as [string, ...string[]]);

export const webhookEndpoint = z
  .object({
    id: id("Webhook endpoint"),
    url: z.string().describe("Where events are POSTed"),
    description: z.string(),
    eventTypes: z.array(subscribableEventType).describe("Event types sent here; empty: every type"),
    enabled: z.boolean(),
    disabledReason: z
      .enum(["manual", "failing"])
      .nullable()
      .describe("manual: disabled by a call; failing: a delivery failed every attempt (about three days) and nothing got through meanwhile"),
    disabledAt: timestamp("When it was disabled").nullable(),
    createdAt: timestamp("Creation time"),
    updatedAt: timestamp("Last change"),
  })
  .meta({ id: "WebhookEndpoint" });
export type WebhookEndpoint = z.output<typeof webhookEndpoint>;

export const webhookEndpointList = listOf(webhookEndpoint);

export const webhookEndpointWithSecret = webhookEndpoint
  .extend({
    secret: z.string().describe("The signing secret (whsec_...): shown only now; verify deliveries with it as Standard Webhooks describes"),
    note: z.string(),
  })
  .meta({ id: "WebhookEndpointWithSecret" });
export type WebhookEndpointWithSecret = z.output<typeof webhookEndpointWithSecret>;

export const DELIVERY_STATES = ["pending", "succeeded", "failed"] as const;

export const webhookAttempt = z
  .object({
    attempt: z.number().int().describe("1 for the first"),
    startedAt: timestamp("When the attempt started"),
    statusCode: z.number().int().nullable().describe("The receiver's HTTP status; null when no answer came"),
    latencyMs: z.number().int(),
    succeeded: z.boolean().describe("True for a 2xx answer"),
    error: z.string().nullable().describe("Why it failed: the status, a timeout, a refused address, a connection error"),
  })
  .meta({ id: "WebhookAttempt" });

export const webhookDelivery = z
  .object({
    id: id("Delivery"),
    endpointId: id("Webhook endpoint"),
    eventId: id("Event (also the webhook-id header)"),
    eventType: z.string(),
    status: z.enum(DELIVERY_STATES).describe("pending: being delivered or waiting for its next attempt"),
    attempts: z.array(webhookAttempt),
    nextAttemptAt: timestamp("When the next attempt is due").nullable(),
    createdAt: timestamp("Creation time"),
    completedAt: timestamp("When it succeeded or failed for good").nullable(),
  })
  .meta({ id: "WebhookDelivery" });
export type WebhookDelivery = z.output<typeof webhookDelivery>;

export const webhookDeliveryList = listOf(webhookDelivery);

/** What sending a test event answers: where to follow its delivery. */
export const webhookTestSent = z
  .object({ endpointId: id("Webhook endpoint"), deliveryId: id("Delivery"), eventId: id("Event (the webhook-id header)") })
  .meta({ id: "WebhookTestSent" });
