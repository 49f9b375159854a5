import { z } from "zod";
import { DELIVERY_STATES, subscribableEventType, webhookDelivery, webhookDeliveryList, webhookEndpoint, webhookEndpointList, webhookEndpointWithSecret, webhookTestSent } from "../contract/webhooks.ts";
import type { WebhookConfig } from "../domain/core/config.ts";
import { errors } from "../domain/core/errors.ts";
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  redeliver,
  rotateEndpointSecret,
  sendTestEvent,
  setEndpointEnabled,
  updateEndpoint,
} from "../domain/events/endpoints.ts";
import { checkOutboundUrl, OutboundRefused } from "../net/outbound.ts";
import { defineTool } from "./define.ts";
import { deleted, id, pageInput } from "../contract/common.ts";

/**
 * Webhook endpoints: where the organization's events are sent (docs/events.md). Admin scope,
 * and the whole organization's reach: an endpoint receives every bucket's events, so a key
 * restricted to one bucket may not manage them.
 */

const url = z.url({ protocol: /^https?$/ }).max(2048).describe("http(s) URL to POST events to, not a private one");
const eventTypes = z.array(subscribableEventType).max(32).describe("Event types to send; empty: all");
const description = z.string().max(500).describe("What the endpoint is for");

/** What can be checked before any request: scheme, credentials, host allowlist, private IP literals. */
function checkedUrl(value: string, config: WebhookConfig): string {
  try {
    return checkOutboundUrl(value, config).toString();
  } catch (err) {
    if (err instanceof OutboundRefused) throw errors.validation([{ path: "url", message: err.message }]);
    throw err;
  }
}

const endpointId = id("Endpoint");

export const webhookTools = [
  defineTool({
    name: "webhooks_create",
    title: "Create a webhook endpoint",
    description: "Registers a URL for the organization's events (Standard Webhooks); returns its secret once.",
    scope: "admin",
    reach: "organization",
    http: { method: "POST", path: "/webhooks", status: 201 },
    annotations: { openWorldHint: true },
    input: z.object({ url, eventTypes: eventTypes.default([]), description: description.default("") }),
    output: webhookEndpointWithSecret,
    errors: ["conflict"],
    handler: (input, { deps, caller }) => createEndpoint(deps, caller, { ...input, url: checkedUrl(input.url, deps.config.webhooks) }),
  }),
  defineTool({
    name: "webhooks_list",
    title: "List webhook endpoints",
    description: "Webhook endpoints, newest first; a disabled one says why.",
    scope: "admin",
    reach: "organization",
    http: { method: "GET", path: "/webhooks" },
    input: z.object({ ...pageInput }),
    output: webhookEndpointList,
    handler: (input, { deps, caller }) => listEndpoints(deps, caller, input),
  }),
  defineTool({
    name: "webhooks_get",
    title: "Get a webhook endpoint",
    description: "One webhook endpoint (never its secret).",
    scope: "admin",
    reach: "organization",
    http: { method: "GET", path: "/webhooks/{id}" },
    input: z.object({ id: endpointId }),
    output: webhookEndpoint,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => getEndpoint(deps, caller, input.id),
  }),
  defineTool({
    name: "webhooks_update",
    title: "Update a webhook endpoint",
    description: "Changes an endpoint's URL, event types or description.",
    scope: "admin",
    reach: "organization",
    http: { method: "PUT", path: "/webhooks/{id}" },
    annotations: { openWorldHint: true },
    input: z.object({ id: endpointId, url: url.optional(), eventTypes: eventTypes.optional(), description: description.optional() }),
    output: webhookEndpoint,
    errors: ["not_found"],
    handler: ({ id: endpoint, ...input }, { deps, caller }) =>
      updateEndpoint(deps, caller, endpoint, { ...input, ...(input.url !== undefined ? { url: checkedUrl(input.url, deps.config.webhooks) } : {}) }),
  }),
  defineTool({
    name: "webhooks_enable",
    title: "Enable a webhook endpoint",
    description: "Resumes sending, also after failures disabled it; failed deliveries are not resent.",
    scope: "admin",
    reach: "organization",
    http: { method: "POST", path: "/webhooks/{id}/enable" },
    annotations: { idempotentHint: true, openWorldHint: true },
    input: z.object({ id: endpointId }),
    output: webhookEndpoint,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => setEndpointEnabled(deps, caller, input.id, true),
  }),
  defineTool({
    name: "webhooks_disable",
    title: "Disable a webhook endpoint",
    description: "Stops sending events to the endpoint; its pending deliveries fail.",
    scope: "admin",
    reach: "organization",
    http: { method: "POST", path: "/webhooks/{id}/disable" },
    annotations: { destructiveHint: true, idempotentHint: true },
    input: z.object({ id: endpointId }),
    output: webhookEndpoint,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => setEndpointEnabled(deps, caller, input.id, false),
  }),
  defineTool({
    name: "webhooks_delete",
    title: "Delete a webhook endpoint",
    description: "Deletes the endpoint with its deliveries; nothing more is sent to it.",
    scope: "admin",
    reach: "organization",
    http: { method: "DELETE", path: "/webhooks/{id}" },
    input: z.object({ id: endpointId }),
    output: deleted,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => deleteEndpoint(deps, caller, input.id),
  }),
  defineTool({
    name: "webhooks_rotate_secret",
    title: "Rotate a webhook endpoint's secret",
    description: "Issues a new signing secret (returned once); for 24 h deliveries are signed with both.",
    scope: "admin",
    reach: "organization",
    http: { method: "PUT", path: "/webhooks/{id}/rotate-secret" },
    // Not idempotent: every call issues a different secret.
    annotations: { idempotentHint: false },
    input: z.object({ id: endpointId }),
    output: webhookEndpointWithSecret,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => rotateEndpointSecret(deps, caller, input.id),
  }),
  defineTool({
    name: "webhooks_send_test",
    title: "Send a test event",
    description: "Sends a webhook.test event to this endpoint only; see webhooks_deliveries_list.",
    scope: "admin",
    reach: "organization",
    http: { method: "POST", path: "/webhooks/{id}/test", status: 202 },
    annotations: { openWorldHint: true },
    input: z.object({ id: endpointId }),
    output: webhookTestSent,
    errors: ["not_found", "conflict"],
    handler: (input, { deps, caller }) => sendTestEvent(deps, caller, input.id),
  }),
  defineTool({
    name: "webhooks_deliveries_list",
    title: "List an endpoint's deliveries",
    description: "Deliveries to the endpoint, newest first, with their attempts.",
    scope: "admin",
    reach: "organization",
    http: { method: "GET", path: "/webhooks/{id}/deliveries" },
    input: z.object({ id: endpointId, status: z.enum(DELIVERY_STATES).optional().describe("Only this state"), ...pageInput }),
    output: webhookDeliveryList,
    errors: ["not_found"],
    handler: ({ id: endpoint, ...q }, { deps, caller }) => listDeliveries(deps, caller, endpoint, q),
  }),
  defineTool({
    name: "webhooks_redeliver",
    title: "Redeliver an event",
    description: "Sends a delivery's event again as a new delivery, with the same webhook-id.",
    scope: "admin",
    reach: "organization",
    http: { method: "POST", path: "/webhooks/{id}/deliveries/{deliveryId}/redeliver", status: 202 },
    annotations: { openWorldHint: true },
    input: z.object({ id: endpointId, deliveryId: id("Delivery") }),
    output: webhookDelivery,
    errors: ["not_found", "conflict"],
    handler: (input, { deps, caller }) => redeliver(deps, caller, input.id, input.deliveryId),
  }),
];
