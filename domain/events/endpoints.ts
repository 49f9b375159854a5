import { and, count, desc, eq, sql } from "drizzle-orm";
import { webhookAttempts, webhookDeliveries, webhookEndpoints, webhookEvents } from "../../db/schema/index.ts";
import type { WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from "../../contract/webhooks.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { type Page, page } from "../core/pagination.ts";
import { emitEvent } from "./emit.ts";
import { newWebhookSecret } from "./signature.ts";

/** Endpoints per organization: each event is written once per endpoint, so fan-out stays bounded. */
export const MAX_ENDPOINTS = 20;
/** After a rotation the previous secret signs too for this long, so receivers can switch over. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

const SECRET_NOTE =
  "Store this secret now: it is shown only once. Every delivery carries webhook-id, webhook-timestamp and webhook-signature headers (Standard Webhooks); verify them with this secret.";

type EndpointRow = typeof webhookEndpoints.$inferSelect;

function view(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.eventTypes,
    enabled: row.enabled,
    disabledReason: (row.disabledReason as WebhookEndpoint["disabledReason"]) ?? null,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The endpoint, if it belongs to the caller's organization (404 otherwise). */
async function resolveEndpoint(db: Deps["db"], caller: Caller, id: string, lock = false): Promise<EndpointRow> {
  const q = db.select().from(webhookEndpoints).where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, caller.orgId)));
  const [row] = lock ? await q.for("update") : await q;
  if (!row) throw errors.notFound("Webhook endpoint");
  return row;
}

export interface EndpointInput {
  url: string;
  eventTypes: string[];
  description: string;
}

export async function createEndpoint(deps: Deps, caller: Caller, input: EndpointInput): Promise<WebhookEndpointWithSecret> {
  const secret = newWebhookSecret();
  const now = deps.clock.now();
  const row = await deps.db.transaction(async (tx) => {
    // Serializes creations per organization so the limit holds under concurrency.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`webhooks:${caller.orgId}`}, 0))`);
    const [{ n } = { n: 0 }] = await tx.select({ n: count() }).from(webhookEndpoints).where(eq(webhookEndpoints.orgId, caller.orgId));
    if (n >= MAX_ENDPOINTS) throw errors.conflict(`An organization can have at most ${MAX_ENDPOINTS} webhook endpoints`, { limit: MAX_ENDPOINTS });
    const [created] = await tx
      .insert(webhookEndpoints)
      .values({ orgId: caller.orgId, url: input.url, description: input.description, eventTypes: [...new Set(input.eventTypes)], secret, createdAt: now, updatedAt: now })
      .returning();
    return created!;
  });
  return { ...view(row), secret, note: SECRET_NOTE };
}

export async function listEndpoints(deps: Deps, caller: Caller, q: { limit: number; offset: number }): Promise<Page<WebhookEndpoint>> {
  const where = eq(webhookEndpoints.orgId, caller.orgId);
  const [rows, [{ total } = { total: 0 }]] = await Promise.all([
    deps.db.select().from(webhookEndpoints).where(where).orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id)).limit(q.limit).offset(q.offset),
    deps.db.select({ total: count() }).from(webhookEndpoints).where(where),
  ]);
  return page(rows.map(view), total, q.offset);
}

export async function getEndpoint(deps: Deps, caller: Caller, id: string): Promise<WebhookEndpoint> {
  return view(await resolveEndpoint(deps.db, caller, id));
}

export async function updateEndpoint(deps: Deps, caller: Caller, id: string, input: Partial<EndpointInput>): Promise<WebhookEndpoint> {
  await resolveEndpoint(deps.db, caller, id);
  const [row] = await deps.db
    .update(webhookEndpoints)
    .set({
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.eventTypes !== undefined ? { eventTypes: [...new Set(input.eventTypes)] } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      updatedAt: deps.clock.now(),
    })
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, caller.orgId)))
    .returning();
  if (!row) throw errors.notFound("Webhook endpoint");
  return view(row);
}

/**
 * Enabling clears a "failing" disable too. Deliveries that failed while the endpoint was off
 * are not resent by themselves: redeliver the ones that matter.
 */
export async function setEndpointEnabled(deps: Deps, caller: Caller, id: string, enabled: boolean): Promise<WebhookEndpoint> {
  await resolveEndpoint(deps.db, caller, id);
  const now = deps.clock.now();
  const [row] = await deps.db
    .update(webhookEndpoints)
    .set(enabled ? { enabled, disabledReason: null, disabledAt: null, updatedAt: now } : { enabled, disabledReason: "manual", disabledAt: now, updatedAt: now })
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, caller.orgId)))
    .returning();
  if (!row) throw errors.notFound("Webhook endpoint");
  return view(row);
}

/** Deleting an endpoint drops its deliveries: pending ones are never sent. */
export async function deleteEndpoint(deps: Deps, caller: Caller, id: string): Promise<{ id: string; deleted: true }> {
  const gone = await deps.db
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, caller.orgId)))
    .returning({ id: webhookEndpoints.id });
  if (gone.length === 0) throw errors.notFound("Webhook endpoint");
  return { id, deleted: true };
}

/** A new secret signs from now on; the previous one signs beside it for a day (both signatures are sent). */
export async function rotateEndpointSecret(deps: Deps, caller: Caller, id: string): Promise<WebhookEndpointWithSecret> {
  const secret = newWebhookSecret();
  const now = deps.clock.now();
  const row = await deps.db.transaction(async (tx) => {
    const current = await resolveEndpoint(tx, caller, id, true);
    const [updated] = await tx
      .update(webhookEndpoints)
      .set({ secret, previousSecret: current.secret, previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS), updatedAt: now })
      .where(eq(webhookEndpoints.id, current.id))
      .returning();
    return updated!;
  });
  return { ...view(row), secret, note: SECRET_NOTE };
}

/** A `webhook.test` event to this endpoint only, delivered like any other (see its deliveries). */
export async function sendTestEvent(deps: Deps, caller: Caller, id: string): Promise<{ endpointId: string; deliveryId: string; eventId: string }> {
  const endpoint = await resolveEndpoint(deps.db, caller, id);
  if (!endpoint.enabled) throw errors.conflict("The endpoint is disabled: enable it first");
  const at = deps.clock.now();
  const sent = await deps.db.transaction(async (tx) => {
    await emitEvent(tx, { orgId: caller.orgId, type: "webhook.test", endpointId: endpoint.id, at, data: { endpointId: endpoint.id, message: "A test event sent by webhooks_send_test" } });
    const [latest] = await tx
      .select({ deliveryId: webhookDeliveries.id, eventId: webhookDeliveries.eventId })
      .from(webhookDeliveries)
      .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
      .where(and(eq(webhookDeliveries.endpointId, endpoint.id), eq(webhookEvents.type, "webhook.test")))
      .orderBy(desc(webhookDeliveries.createdAt))
      .limit(1);
    return latest!;
  });
  deps.jobs.kick();
  return { endpointId: endpoint.id, ...sent };
}

type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** An attempt as the delivery's view shows it. */
interface AttemptRow {
  attempt: number;
  startedAt: string;
  statusCode: number | null;
  latencyMs: number;
  succeeded: boolean;
  error: string | null;
}

/**
 * A delivery's attempts, read in the statement that reads the delivery: an attempt and the
 * delivery's outcome are committed together, and two statements could show one without the
 * other (an attempt that succeeded on a delivery still pending).
 */
const attemptsOf = sql<AttemptRow[]>`coalesce((
  select json_agg(json_build_object(
    'attempt', a.attempt, 'startedAt', a.started_at, 'statusCode', a.status_code,
    'latencyMs', a.latency_ms, 'succeeded', a.succeeded, 'error', a.error
  ) order by a.attempt, a.started_at)
  from ${webhookAttempts} a where a.delivery_id = ${webhookDeliveries.id}
), '[]'::json)`;

function deliveryView(r: DeliveryRow & { eventType: string; tried: AttemptRow[] | string }): WebhookDelivery {
  const attempts: AttemptRow[] = typeof r.tried === "string" ? JSON.parse(r.tried) : r.tried;
  return {
    id: r.id,
    endpointId: r.endpointId,
    eventId: r.eventId,
    eventType: r.eventType,
    status: r.status,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: new Date(a.startedAt).toISOString(),
      statusCode: a.statusCode,
      latencyMs: a.latencyMs,
      succeeded: a.succeeded,
      error: a.error,
    })),
    nextAttemptAt: r.status === "pending" ? (r.nextAttemptAt?.toISOString() ?? null) : null,
    createdAt: r.createdAt.toISOString(),
    completedAt: r.completedAt?.toISOString() ?? null,
  };
}

export async function listDeliveries(
  deps: Deps,
  caller: Caller,
  endpointId: string,
  q: { status?: DeliveryRow["status"] | undefined; limit: number; offset: number },
): Promise<Page<WebhookDelivery>> {
  await resolveEndpoint(deps.db, caller, endpointId);
  const where = and(
    eq(webhookDeliveries.endpointId, endpointId),
    eq(webhookDeliveries.orgId, caller.orgId),
    ...(q.status ? [eq(webhookDeliveries.status, q.status)] : []),
  );
  const [rows, [{ total } = { total: 0 }]] = await Promise.all([
    deps.db
      .select({ d: webhookDeliveries, eventType: webhookEvents.type, tried: attemptsOf })
      .from(webhookDeliveries)
      .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
      .where(where)
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
      .limit(q.limit)
      .offset(q.offset),
    deps.db.select({ total: count() }).from(webhookDeliveries).where(where),
  ]);
  return page(rows.map((r) => deliveryView({ ...r.d, eventType: r.eventType, tried: r.tried })), total, q.offset);
}

/**
 * Sends the delivery's event to its endpoint again, as a new delivery with its own attempts.
 * The event keeps its id, so the receiver sees the same webhook-id and can tell it is a repeat.
 */
export async function redeliver(deps: Deps, caller: Caller, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
  const endpoint = await resolveEndpoint(deps.db, caller, endpointId);
  if (!endpoint.enabled) throw errors.conflict("The endpoint is disabled: enable it first");
  const created = await deps.db.transaction(async (tx) => {
    const [original] = await tx
      .select({ eventId: webhookDeliveries.eventId, eventType: webhookEvents.type })
      .from(webhookDeliveries)
      .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.endpointId, endpoint.id), eq(webhookDeliveries.orgId, caller.orgId)));
    if (!original) throw errors.notFound("Delivery");
    const [row] = await tx.insert(webhookDeliveries).values({ orgId: caller.orgId, eventId: original.eventId, endpointId: endpoint.id }).returning();
    await tx.execute(sql`
      insert into job_outbox (name, payload)
      values ('webhooks.deliver', jsonb_build_object('orgId', ${caller.orgId}::text, 'deliveryId', ${row!.id}::text, 'attempt', 1))`);
    return { ...row!, eventType: original.eventType };
  });
  deps.jobs.kick();
  // A new delivery: no attempt yet.
  return deliveryView({ ...created, tried: [] });
}
