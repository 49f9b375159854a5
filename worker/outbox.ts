import { and, asc, eq, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import { jobOutbox } from "../db/schema/index.ts";
import type { Deps } from "../domain/core/deps.ts";
import type { JobName } from "../domain/core/jobs.ts";
import type { JobQueue } from "../domain/ports/queue.ts";
import type { JobLedger } from "./memory-queue.ts";

/**
 * Moves committed outbox rows to the queue. Producers `kick()` it after their commit; a slow
 * poll catches anything a crash or an unreachable queue left behind, and (in-process queue)
 * claims a dead process stopped renewing.
 */
export class OutboxDispatcher implements JobLedger {
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly deps: Pick<Deps, "db" | "clock" | "log">,
    private readonly queue: JobQueue,
    private readonly opts: { pollMs?: number; lockMs: number },
  ) {}

  /** Starts dispatching, also again after stop (the thumbs bench fills the outbox while stopped). */
  start(): void {
    this.stopped = false;
    this.timer ??= setInterval(() => this.kick(), this.opts.pollMs ?? 2000);
    this.kick();
  }

  /** Dispatch soon; calls while a pass runs fold into one more pass. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Resolves when nothing is being dispatched (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * Shutdown waits for the pass in hand only, and that pass hands over no further row: a queue
   * that is away costs the shutdown one add (the queue's own deadline), not one per row and
   * pass. Rows not handed over are given back; the next start, here or elsewhere, sends them.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.idle();
  }

  private async drain(): Promise<void> {
    try {
      while ((await this.dispatchBatch()) === BATCH && !this.stopped) {}
    } catch (err) {
      this.deps.log.warn("outbox dispatch failed; will retry", { error: String(err) });
    }
  }

  /**
   * One batch. No transaction is held while the queue is asked: the rows are claimed first,
   * in one statement (their dispatched_at, the claim other passes and instances respect until
   * it lapses), then handed to the queue, then marked done (durable queue) in another
   * statement. A queue that is away (Redis down) costs this pass its time, never the
   * database's: the rows it could not take are given back for the next pass. A crash between
   * the hand-over and the mark leaves a claim that lapses; the row is handed over again,
   * under the same job id, which the durable queue keeps as one job.
   */
  async dispatchBatch(): Promise<number> {
    const now = this.deps.clock.now();
    // Claims are stamped and compared with the database's clock: instances whose clocks
    // disagree must still agree on whose claim has lapsed.
    const abandoned = sql`now() - make_interval(secs => ${this.opts.lockMs / 1000}::double precision)`;
    const due = this.deps.db
      .select({ id: jobOutbox.id })
      .from(jobOutbox)
      .where(
        and(
          isNull(jobOutbox.doneAt),
          // A job not deferred is due at once: its run_after is the database's time at insert,
          // which an application clock running behind (a test clock) must not hold back.
          or(lte(jobOutbox.runAfter, now), lte(jobOutbox.runAfter, jobOutbox.createdAt)),
          or(isNull(jobOutbox.dispatchedAt), lt(jobOutbox.dispatchedAt, abandoned)),
        ),
      )
      .orderBy(asc(jobOutbox.createdAt))
      .limit(BATCH)
      .for("update", { skipLocked: true });
    const claimed = await this.deps.db.update(jobOutbox).set({ dispatchedAt: sql`now()` }).where(inArray(jobOutbox.id, due)).returning();
    if (claimed.length === 0) return 0;
    claimed.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    const handed: string[] = [];
    try {
      for (const row of claimed) {
        if (this.stopped) break;
        await this.queue.add({ id: row.id, name: row.name as JobName, data: row.payload as never });
        handed.push(row.id);
      }
    } finally {
      const left = claimed.map((r) => r.id).filter((id) => !handed.includes(id));
      if (left.length > 0) await this.released(left).catch(() => {}); // else the claims lapse
      // The in-process queue settles each row itself (settled); the durable one has it now.
      if (this.queue.durable && handed.length > 0) {
        await this.deps.db.update(jobOutbox).set({ doneAt: sql`now()` }).where(inArray(jobOutbox.id, handed));
      }
    }
    return claimed.length;
  }

  async settled(id: string, error: string | null): Promise<void> {
    await this.deps.db.update(jobOutbox).set({ doneAt: sql`now()`, error }).where(eq(jobOutbox.id, id));
  }

  async released(ids: string[]): Promise<void> {
    await this.deps.db
      .update(jobOutbox)
      .set({ dispatchedAt: null })
      .where(and(inArray(jobOutbox.id, ids), isNull(jobOutbox.doneAt)));
  }

  async renewed(ids: string[]): Promise<void> {
    await this.deps.db
      .update(jobOutbox)
      .set({ dispatchedAt: sql`now()` })
      .where(and(inArray(jobOutbox.id, ids), isNull(jobOutbox.doneAt)));
  }
}

const BATCH = 100;

/** Finished rows are kept a week for inspection, failed ones (in-process queue) a month. */
export async function pruneOutbox(deps: Pick<Deps, "db">): Promise<void> {
  await deps.db
    .delete(jobOutbox)
    .where(
      or(
        and(isNull(jobOutbox.error), lt(jobOutbox.doneAt, sql`now() - interval '7 days'`)),
        lt(jobOutbox.doneAt, sql`now() - interval '30 days'`),
      ),
    );
}

/** Committed jobs not handed to a queue yet (waiting for a dispatch pass, or deferred). */
export async function pendingOutboxRows(deps: Pick<Deps, "db">): Promise<number> {
  const [row] = await deps.db
    .select({ n: sql<number>`count(*)::int` })
    .from(jobOutbox)
    .where(and(isNull(jobOutbox.doneAt), isNull(jobOutbox.dispatchedAt)));
  return row?.n ?? 0;
}
