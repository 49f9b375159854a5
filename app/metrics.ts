import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { within } from "../domain/core/within.ts";

/**
 * The service's Prometheus metrics (docs/operations.md lists them). One registry per process
 * role (server or worker), filled at a few shared choke points: the HTTP pipeline, the tool
 * invoker, the storage adapter, the database client, the job processors and the search port.
 * Labels are bounded by construction: tool names come from the registry, operations and job
 * kinds from fixed lists, statuses are HTTP codes; no id, key or organization ever becomes a label.
 */

export type Surface = "rest" | "mcp" | "cli";

const SECONDS_FAST = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const SECONDS_REQUEST = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const SECONDS_JOB = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** Leading SQL keywords kept as the `operation` label; anything else is "other". */
const SQL_OPERATIONS = new Set(["select", "insert", "update", "delete", "with", "begin", "commit", "rollback", "savepoint", "release", "set", "declare", "fetch", "close", "lock"]);

export function sqlOperation(text: string): string {
  const word = /^\s*\(?\s*([a-z]+)/i.exec(text)?.[1]?.toLowerCase() ?? "other";
  return SQL_OPERATIONS.has(word) ? word : "other";
}

/** What a scrape asks the process for at that moment (queue depth, pool). */
export interface LiveSources {
  /**
   * The job counts, from each place that holds some (the queue's Redis, the database's outbox),
   * read separately: one down must not hide what the other can say (a growing outbox is the
   * sign of a Redis outage).
   */
  jobs?: readonly (() => Promise<Record<string, number>>)[];
  pool?: () => { max: number; inUse: number; idle: number; waiting: number } | null;
}

/**
 * The longest a scrape waits for the job counts. They come from Redis (BullMQ) and the
 * database; with either down a count could wait out every reconnection attempt, and the whole
 * scrape with it: metrics would vanish exactly during the incident.
 */
export const JOB_COUNTS_DEADLINE_MS = 1_000;

/** One scrape's job counts: what could be read, and whether every source answered in time. */
interface JobCounts {
  counts: Record<string, number>;
  complete: boolean;
}

/**
 * The job counts for one scrape: undefined when the process has none to give. Both gauges of a
 * scrape share one answer (the registry collects them side by side). A source's read still out
 * when the next scrape comes is waited for again rather than started twice, so scrapes during an
 * outage do not pile commands on a dead connection.
 */
class JobCountReader {
  private readonly reading = new Map<number, Promise<Record<string, number> | null>>();
  private answer: Promise<JobCounts | undefined> | null = null;

  constructor(private readonly sources: () => LiveSources) {}

  read(): Promise<JobCounts | undefined> {
    if (this.answer) return this.answer;
    const reads = this.sources().jobs;
    if (!reads?.length) return Promise.resolve(undefined);
    const answer = Promise.all(reads.map((read, i) => within(this.readingOf(i, read), JOB_COUNTS_DEADLINE_MS, null))).then((parts) => ({
      counts: Object.assign({}, ...parts.filter((p) => p !== null)) as Record<string, number>,
      complete: parts.every((p) => p !== null),
    }));
    this.answer = answer;
    void answer.finally(() => {
      if (this.answer === answer) this.answer = null;
    });
    return answer;
  }

  private readingOf(i: number, read: () => Promise<Record<string, number>>): Promise<Record<string, number> | null> {
    const pending = this.reading.get(i);
    if (pending) return pending;
    const reading = read().catch(() => null);
    this.reading.set(i, reading);
    void reading.finally(() => {
      if (this.reading.get(i) === reading) this.reading.delete(i);
    });
    return reading;
  }
}

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<"surface" | "tool" | "status">;
  readonly requestDuration: Histogram<"surface" | "tool">;
  readonly inFlight: Gauge;
  readonly rateLimited: Counter<"surface">;
  readonly idempotentReplays: Counter<"surface">;
  readonly jobRuns: Counter<"kind" | "outcome">;
  readonly jobDuration: Histogram<"kind">;
  readonly storageDuration: Histogram<"operation">;
  readonly storageErrors: Counter<"operation">;
  readonly dbDuration: Histogram<"operation">;
  readonly dbErrors: Counter<"operation">;
  readonly searchDuration: Histogram<"backend">;
  readonly searchErrors: Counter<"backend">;
  readonly uploadedBytes: Counter;
  readonly egressBytes: Counter<"kind">;
  private sources: LiveSources = {};

  constructor(opts: { role: "server" | "worker" | "task"; defaultMetrics?: boolean }) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ role: opts.role });
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: "media_requests_total",
      help: "HTTP requests to tools, by surface (rest, mcp, cli: the CLI's MCP bridge), tool and status (an MCP tool error counts with its REST status)",
      labelNames: ["surface", "tool", "status"],
      registers,
    });
    this.requestDuration = new Histogram({
      name: "media_request_duration_seconds",
      help: "Time from request to response, by surface and tool",
      labelNames: ["surface", "tool"],
      buckets: SECONDS_REQUEST,
      registers,
    });
    this.inFlight = new Gauge({ name: "media_requests_in_flight", help: "Requests being answered now", registers });
    this.rateLimited = new Counter({ name: "media_rate_limited_total", help: "Requests refused with 429 rate_limited", labelNames: ["surface"], registers });
    this.idempotentReplays = new Counter({
      name: "media_idempotent_replays_total",
      help: "Requests answered from a stored response (same Idempotency-Key)",
      labelNames: ["surface"],
      registers,
    });
    this.jobRuns = new Counter({ name: "media_job_runs_total", help: "Job runs by kind and outcome (completed, failed)", labelNames: ["kind", "outcome"], registers });
    this.jobDuration = new Histogram({ name: "media_job_duration_seconds", help: "Time one job run took, by kind", labelNames: ["kind"], buckets: SECONDS_JOB, registers });
    this.storageDuration = new Histogram({
      name: "media_storage_request_duration_seconds",
      help: "Object storage calls by operation (to the response headers for GET)",
      labelNames: ["operation"],
      buckets: SECONDS_REQUEST,
      registers,
    });
    this.storageErrors = new Counter({ name: "media_storage_request_errors_total", help: "Object storage calls that failed", labelNames: ["operation"], registers });
    this.dbDuration = new Histogram({
      name: "media_db_query_duration_seconds",
      help: "SQL statements by leading keyword (select, insert, ...); a transaction counts as begin",
      labelNames: ["operation"],
      buckets: SECONDS_FAST,
      registers,
    });
    this.dbErrors = new Counter({ name: "media_db_query_errors_total", help: "SQL statements that failed", labelNames: ["operation"], registers });
    this.searchDuration = new Histogram({ name: "media_search_duration_seconds", help: "Searches by backend", labelNames: ["backend"], buckets: SECONDS_FAST, registers });
    this.searchErrors = new Counter({ name: "media_search_errors_total", help: "Searches that failed", labelNames: ["backend"], registers });
    this.uploadedBytes = new Counter({ name: "media_uploaded_bytes_total", help: "Bytes of uploads confirmed (new or changed objects)", registers });
    this.egressBytes = new Counter({
      name: "media_egress_issued_bytes_total",
      help: "Bytes of objects whose download or stream URL was issued (estimated egress)",
      labelNames: ["kind"],
      registers,
    });
    const sources = () => this.sources;
    const jobCounts = new JobCountReader(sources);
    new Gauge({
      name: "media_jobs_unavailable",
      help: `1 when this scrape could not read all the job counts (the queue's Redis or the database did not answer within ${JOB_COUNTS_DEADLINE_MS} ms): media_jobs then holds only what was read, the rest left out, not zero`,
      registers,
      async collect() {
        const read = await jobCounts.read();
        if (read !== undefined) this.set(read.complete ? 0 : 1);
      },
    });
    new Gauge({
      name: "media_jobs",
      help: "Jobs by state, read at scrape time (outbox: committed, not yet handed to the queue)",
      labelNames: ["state"],
      registers,
      async collect() {
        this.reset();
        const read = await jobCounts.read();
        for (const [state, n] of Object.entries(read?.counts ?? {})) this.set({ state }, n);
      },
    });
    new Gauge({
      name: "media_db_pool_connections",
      help: "Database connections by state (in_use, idle) and the pool's size (max)",
      labelNames: ["state"],
      registers,
      collect() {
        const pool = sources().pool?.();
        if (!pool) return;
        this.set({ state: "in_use" }, pool.inUse);
        this.set({ state: "idle" }, pool.idle);
        this.set({ state: "max" }, pool.max);
      },
    });
    new Gauge({
      name: "media_db_pool_waiting",
      help: "Statements waiting for a free database connection",
      registers,
      collect() {
        const pool = sources().pool?.();
        if (pool) this.set(pool.waiting);
      },
    });
  }

  /** Scrape-time sources, known once the adapters are open. */
  observe(more: LiveSources): void {
    this.sources = { ...this.sources, ...more };
  }

  /** Times `fn` into a histogram and counts its failure; the duration is recorded either way. */
  async time<T, L extends string>(histogram: Histogram<L>, errors: Counter<L>, labels: Partial<Record<L, string>>, fn: () => Promise<T>): Promise<T> {
    const end = histogram.startTimer(labels);
    try {
      return await fn();
    } catch (err) {
      errors.inc(labels);
      throw err;
    } finally {
      end();
    }
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
