import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { jobOutbox } from "../../db/schema/index.ts";
import { ManualClock } from "../../domain/core/clock.ts";
import type { JobQueue, QueuedJob } from "../../domain/ports/queue.ts";
import { OutboxDispatcher } from "../../worker/outbox.ts";
import { startServer, type TestServer } from "../support/server.ts";

/**
 * The dispatcher never keeps the database waiting on the queue: with the embedded database,
 * which runs one transaction at a time, a dispatch pass that held its transaction while Redis
 * was away stalled every request until the queue answered. Rows are claimed in one statement,
 * handed over with no transaction open, then marked; rows the queue refused are given back.
 *
 * The rows here are deferred a year, and this file's dispatcher runs on a clock two years
 * ahead, so the server's own dispatcher leaves them alone.
 */

let server: TestServer;
const clock = new ManualClock(new Date(Date.now() + 2 * 365 * 86_400_000));

/** A durable queue whose `add` waits until released, then accepts or refuses. */
function stuckQueue() {
  const asked: QueuedJob[] = [];
  let answer!: (ok: boolean) => void;
  const answered = new Promise<boolean>((r) => (answer = r));
  const queue: JobQueue = {
    durable: true,
    add: async (job) => {
      asked.push(job);
      if (!(await answered)) throw Object.assign(new Error("connection is closed"), { code: "ECONNREFUSED" });
    },
    close: async () => {},
  };
  return { queue, asked, answer };
}

async function deferredRow(): Promise<string> {
  const [row] = await server.services.deps.db
    .insert(jobOutbox)
    .values({ name: "search.sync", payload: { orgId: crypto.randomUUID() }, runAfter: new Date(Date.now() + 365 * 86_400_000) })
    .returning({ id: jobOutbox.id });
  return row!.id;
}

const rowOf = async (id: string) => (await server.services.deps.db.select().from(jobOutbox).where(eq(jobOutbox.id, id)))[0]!;

/** A transaction of the request path, answered within a second while the queue is stuck. */
async function databaseAnswers(): Promise<boolean> {
  const tx = server.services.deps.db.transaction(async (t) => t.select({ id: jobOutbox.id }).from(jobOutbox).limit(1));
  return Promise.race([tx.then(() => true), Bun.sleep(1000).then(() => false)]);
}

describe("outbox dispatch while the queue does not answer", () => {
  beforeAll(async () => {
    server = await startServer({ embedded: true });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  test("the database answers meanwhile; an accepted row is done afterwards", async () => {
    const id = await deferredRow();
    const { queue, asked, answer } = stuckQueue();
    const outbox = new OutboxDispatcher({ ...server.services.deps, clock }, queue, { lockMs: 30_000 });
    outbox.kick();
    while (asked.length === 0) await Bun.sleep(10);
    expect(asked.map((j) => j.id)).toEqual([id]);
    expect(await databaseAnswers()).toBe(true);
    // Claimed: another pass leaves it alone while the queue is being asked.
    expect((await rowOf(id)).dispatchedAt).not.toBeNull();
    answer(true);
    await outbox.idle();
    expect((await rowOf(id)).doneAt).not.toBeNull();
  });

  test("a row the queue refused is given back for the next pass", async () => {
    const id = await deferredRow();
    const { queue, asked, answer } = stuckQueue();
    const outbox = new OutboxDispatcher({ ...server.services.deps, clock }, queue, { lockMs: 30_000 });
    outbox.kick();
    while (asked.length === 0) await Bun.sleep(10);
    expect(await databaseAnswers()).toBe(true);
    answer(false);
    await outbox.idle();
    const row = await rowOf(id);
    expect({ dispatchedAt: row.dispatchedAt, doneAt: row.doneAt }).toEqual({ dispatchedAt: null, doneAt: null });
  });

  // Shutdown waits for the pass in hand: one add at most, however slowly the queue answers each.
  test("a dispatcher told to stop hands over no further row; the rest are given back for the next start", async () => {
    const ids = [await deferredRow(), await deferredRow(), await deferredRow()];
    const { queue, asked, answer } = stuckQueue();
    const outbox = new OutboxDispatcher({ ...server.services.deps, clock }, queue, { lockMs: 30_000 });
    outbox.kick();
    while (asked.length === 0) await Bun.sleep(10);
    const stopping = outbox.stop();
    // A producer's kick after stop starts no pass.
    outbox.kick();
    answer(true);
    await stopping;
    expect(asked).toHaveLength(1);
    for (const id of ids.filter((id) => id !== asked[0]!.id)) {
      const row = await rowOf(id);
      expect({ dispatchedAt: row.dispatchedAt, doneAt: row.doneAt }).toEqual({ dispatchedAt: null, doneAt: null });
    }
  });
});
