import { sql } from "drizzle-orm";
import { index, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { createdAt, uuidKey } from "./columns.ts";

/**
 * Transactional outbox: a job is written in the same transaction as the change that needs
 * it, then handed to the queue by the dispatcher. A crash between commit and enqueue loses
 * nothing; the queue dedupes by id, so handing a job over twice is harmless.
 *
 * With BullMQ the row is done once the queue accepted it (Redis keeps the job from then on).
 * With the in-process queue nothing outlives the process, so the row stays open until the
 * job settles: `dispatched_at` is a claim the holder renews, and a claim nobody renewed for
 * the lock duration (a killed process) is dispatched again.
 */
export const jobOutbox = pgTable(
  "job_outbox",
  {
    id: uuidKey(),
    name: text("name").notNull(),
    payload: jsonb("payload").notNull(),
    runAfter: timestamp("run_after", { withTimezone: true }).notNull().defaultNow(),
    createdAt: createdAt(),
    /** Last hand-over to a queue (in-process: the holder's renewed claim). */
    dispatchedAt: timestamp("dispatched_at", { withTimezone: true }),
    /** The outbox is done with the row: handed to a durable queue, or settled in-process. */
    doneAt: timestamp("done_at", { withTimezone: true }),
    /** In-process only: why the job failed for good (BullMQ keeps its failed jobs itself). */
    error: text("error"),
  },
  (t) => [index("job_outbox_open_idx").on(t.runAfter).where(sql`${t.doneAt} is null`)],
);
