import { and, eq, gte, sql } from "drizzle-orm";
import { type Db, rowsOf } from "../../db/client.ts";
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from "../../db/schema/index.ts";
import { recordAudit } from "../audit/audit-writer.ts";
import type { Deps } from "../core/deps.ts";
import type { JobPayloads } from "../core/jobs.ts";
import type { WebhookSender } from "../ports/webhook-sender.ts";
import { signedHeaders } from "./signature.ts";

/**
 * One attempt of one delivery: the `webhooks.deliver` job. At least once: a run first claims
 * the attempt (the delivery row says which run holds it, until when), sends, then records the
 * outcome and, when it failed and attempts remain, the next attempt's job, in one transaction.
 * A run killed mid-send leaves a claim that lapses; the queue runs the job again, and that run
 * takes the lapsed claim over and sends again (the receiver sees the same webhook-id twice).
 * Retries double from WEBHOOK_BACKOFF_MS: with the defaults (13 attempts from one minute) the
 * last is about 68 hours after the first. A delivery that fails every attempt disables its
 * endpoint, unless something got through to it meanwhile.
 */

/** A claim outlives the request's own deadline by this much before another run may take it. */
const CLAIM_GRACE_MS = 5000;

interface Claimed {
  id: string;
  org_id: string;
  endpoint_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_valid: boolean | null;
  event_id: string;
  body: string;
}

export async function deliverWebhook(deps: Deps, sender: WebhookSender, job: JobPayloads["webhooks.deliver"]): Promise<void> {
  const cfg = deps.config.webhooks;
  const n = job.attempt;
  const claimId = crypto.randomUUID();
  const [claimed] = rowsOf<Claimed>(
    await deps.db.execute(sql`
      update webhook_deliveries d
      set attempts = ${n}, attempting_until = now() + make_interval(secs => ${(cfg.timeoutMs + CLAIM_GRACE_MS) / 1000}::double precision),
          claim_id = ${claimId}::uuid, updated_at = now()
      from webhook_endpoints e, webhook_events ev
      where d.id = ${job.deliveryId}::uuid and e.id = d.endpoint_id and ev.id = d.event_id
        and d.status = 'pending' and e.enabled and d.next_attempt_at <= now()
        and ((d.attempts = ${n - 1} and d.attempting_until is null) or (d.attempts = ${n} and d.attempting_until < now()))
      returning d.id, d.org_id, e.id as endpoint_id, e.url, e.secret, e.previous_secret,
        e.previous_secret_expires_at > now() as previous_valid, ev.id as event_id, ev.payload::text as body`),
  );
  if (!claimed) return notClaimed(deps, job);

  const secrets = [claimed.secret, ...(claimed.previous_valid && claimed.previous_secret ? [claimed.previous_secret] : [])];
  const headers = {
    "content-type": "application/json",
    "user-agent": "media-storage-webhooks/1",
    // The attempt's own time: receivers refuse timestamps far from their clock.
    ...signedHeaders(secrets, claimed.event_id, Math.floor(Date.now() / 1000), claimed.body),
  };
  const startedAt = new Date();
  const t0 = performance.now();
  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    statusCode = (await sender.post(claimed.url, headers, claimed.body)).status;
    if (statusCode < 200 || statusCode >= 300) error = `The endpoint answered HTTP ${statusCode}`;
  } catch (err) {
    error = describeFailure(err);
  }
  const latencyMs = Math.round(performance.now() - t0);
  const succeeded = error === null;
  const final = succeeded || n >= cfg.attempts;
  const delaySecs = (cfg.backoffMs * 2 ** (n - 1)) / 1000;

  await deps.db.transaction(async (tx) => {
    const [updated] = await tx
      .update(webhookDeliveries)
      .set({
        status: succeeded ? "succeeded" : final ? "failed" : "pending",
        attemptingUntil: null,
        claimId: null,
        lastStatusCode: statusCode,
        lastError: error,
        nextAttemptAt: final ? null : sql`now() + make_interval(secs => ${delaySecs}::double precision)`,
        completedAt: final ? sql`now()` : null,
        updatedAt: sql`now()`,
      })
      .where(and(eq(webhookDeliveries.id, claimed.id), eq(webhookDeliveries.claimId, claimId)))
      .returning();
    // Our claim lapsed and another run took the attempt over: it records the outcome.
    if (!updated) return;
    await tx.insert(webhookAttempts).values({ orgId: claimed.org_id, deliveryId: claimed.id, attempt: n, startedAt, statusCode, latencyMs, succeeded, error });
    if (!final) await enqueueAttempt(tx, { ...job, attempt: n + 1 }, sql`now() + make_interval(secs => ${delaySecs}::double precision)`);
    else if (!succeeded) await disableIfFailing(tx, deps, claimed.endpoint_id, claimed.org_id, updated.createdAt);
  });
}

/** Why a run could not claim its attempt, and what follows from it. */
async function notClaimed(deps: Deps, job: JobPayloads["webhooks.deliver"]): Promise<void> {
  const [state] = rowsOf<{ status: string; attempts: number; enabled: boolean; claimed_until: string | null; due_at: string | null; live_claim: boolean; due: boolean }>(
    await deps.db.execute(sql`
      select d.status, d.attempts, e.enabled, d.attempting_until::text as claimed_until, d.next_attempt_at::text as due_at,
        coalesce(d.attempting_until >= now(), false) as live_claim, coalesce(d.next_attempt_at <= now(), true) as due
      from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where d.id = ${job.deliveryId}::uuid`),
  );
  if (!state || state.status !== "pending") return;
  if (!state.enabled) {
    // A delivery is not kept waiting for an endpoint that may never come back: redeliver it once enabled.
    await deps.db
      .update(webhookDeliveries)
      .set({ status: "failed", lastError: "The endpoint is disabled", nextAttemptAt: null, completedAt: sql`now()`, updatedAt: sql`now()` })
      .where(and(eq(webhookDeliveries.id, job.deliveryId), eq(webhookDeliveries.status, "pending"), sql`(attempting_until is null or attempting_until < now())`));
    return;
  }
  // Another run is sending this very attempt (the queue ran the job twice, or its first run
  // died holding the claim): look again when the claim lapses, to take it over if it was left.
  if (state.attempts === job.attempt && state.live_claim) return enqueueAttempt(deps.db, job, sql`${state.claimed_until}::timestamptz`);
  // Dispatched before its time (clocks disagree): run when it is due.
  if (state.attempts === job.attempt - 1 && !state.due) return enqueueAttempt(deps.db, job, sql`${state.due_at}::timestamptz`);
  // Otherwise the attempt was made and recorded already: nothing to do.
}

async function enqueueAttempt(db: Db, job: JobPayloads["webhooks.deliver"], runAfter: ReturnType<typeof sql>): Promise<void> {
  await db.execute(sql`
    insert into job_outbox (name, payload, run_after)
    values ('webhooks.deliver', ${JSON.stringify(job)}::text::jsonb, ${runAfter})`);
}

/**
 * A delivery failed its last attempt. The endpoint is persistently failing unless some delivery
 * to it succeeded since this one began: then it is disabled, which its view and the audit log show.
 */
async function disableIfFailing(tx: Db, deps: Deps, endpointId: string, orgId: string, since: Date): Promise<void> {
  const [ok] = await tx
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, "succeeded"), gte(webhookDeliveries.completedAt, since)))
    .limit(1);
  if (ok) return;
  const disabled = await tx
    .update(webhookEndpoints)
    .set({ enabled: false, disabledReason: "failing", disabledAt: sql`now()`, updatedAt: sql`now()` })
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.enabled, true)))
    .returning({ id: webhookEndpoints.id });
  if (disabled.length === 0) return;
  deps.log.warn("webhook endpoint disabled after a delivery failed every attempt", { orgId, endpointId });
  await recordAudit(tx, { orgId, actor: { type: "system" }, action: "webhook_endpoint_disabled", targets: { id: endpointId }, status: 200 });
}

function describeFailure(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string };
  if (e?.name === "OutboundRefused" || e?.name === "OutboundTimeout") return e.message ?? String(err);
  const text = e?.code ? `${e.code}${e.message && !e.message.includes(e.code) ? `: ${e.message}` : ""}` : (e?.message ?? String(err));
  return `Connection failed: ${text}`.slice(0, 500);
}
