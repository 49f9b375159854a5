import type { ReadPurpose, ReadRouter } from "./read-router.ts";
// Evaluated first: it registers the postgres.js patch (postgres-fix.ts) before postgres.js loads below.
import "./client.ts";
import type { Db } from "./client.ts";
import { instrumentPostgresJs, type SqlInstrument } from "./instrument.ts";
import * as schema from "./schema/index.ts";

const { default: postgres } = await import("postgres");
const { drizzle: drizzlePostgres } = await import("drizzle-orm/postgres-js");

/** A point in the WAL, as PostgreSQL prints it ("16/B374D848"), made comparable. */
export function parseLsn(text: string): bigint {
  const [hi, lo] = text.split("/");
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

interface Replica {
  db: Db;
  client: ReturnType<typeof postgres>;
  /** Full-text searches, on a small pool with their own deadline, as on the primary (app/services.ts). */
  searchDb: Db;
  searchClient: ReturnType<typeof postgres>;
  /**
   * The time of the newest sample of the primary's WAL position this replica has replayed:
   * it holds every write committed before then. -Infinity: none within the bound (or down).
   */
  freshAsOf: number;
}

export interface ReplicaOptions {
  primaryUrl: string;
  urls: string[];
  /** A replica whose data is older than this serves no reads, and a writer's reads stay on the primary this long. */
  maxLagMs: number;
  poolSize: number;
  statementTimeoutMs: number;
  searchPoolSize: number;
  /** 0: the reads' statementTimeoutMs. */
  searchStatementTimeoutMs: number;
  instrument?: SqlInstrument;
  /** Called when a replica stops or starts serving reads (for the log). */
  onChange?: (replica: number, serving: boolean) => void;
  now?: () => number;
}

/** Connections fail fast, as the primary's do (db/client.ts): a replica that is down must cost a read nothing but the fallback. */
const FAIL_FAST = { connect_timeout: 2, backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1) };

/**
 * Streaming replicas for reads. Every `checkMs` the primary's WAL position is sampled and each
 * replica asked how far it has replayed; a replica has everything the primary had at the time
 * of the newest sample at or below its replay position. A read goes to a replica only when that
 * time is within `maxLagMs` of now, checked at the read, so a replica that lags, stops replaying
 * or is down (its check fails or hangs) drops out by itself within the bound, and the reads
 * fall back to the primary. Read-your-writes follows from the same bound: an organization that
 * wrote at W reads from the primary until W + maxLagMs, and from then on any replica serving
 * reads has replayed a sample taken after W. Writes are marked in this process only; with
 * several instances, a caller whose next request reaches another instance may read from a
 * replica that is up to maxLagMs behind (docs/scaling.md).
 */
export class ReplicaReads implements ReadRouter {
  private readonly replicas: Replica[];
  private readonly primary: ReturnType<typeof postgres>;
  /** The primary's WAL position over the last maxLagMs, oldest first. */
  private samples: { at: number; lsn: bigint }[] = [];
  /** Until when each organization that wrote reads from the primary: all its reads, or only its usage. */
  private readonly wroteUntil = { data: new Map<string, number>(), usage: new Map<string, number>() };
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private readonly now: () => number;
  readonly checkMs: number;

  constructor(private readonly opts: ReplicaOptions) {
    this.now = opts.now ?? Date.now;
    // Four checks within the bound, so an idle replica stays within it between checks; at least
    // one a second, so a replica that goes down is noticed promptly whatever the bound.
    this.checkMs = Math.max(25, Math.min(1000, Math.floor(opts.maxLagMs / 4)));
    this.primary = postgres(opts.primaryUrl, { max: 1, onnotice: () => {}, ...FAIL_FAST, connection: { application_name: "media-replica-check" } });
    const searchTimeout = opts.searchStatementTimeoutMs || opts.statementTimeoutMs;
    const base: SqlInstrument = opts.instrument ?? ((_kind, _statement, run) => run());
    const open = (url: string, max: number, name: string, ms: number, replica: () => Replica) => {
      // application_name lets an operator (and the tests) see which connections read from a replica.
      const client = postgres(url, { max, onnotice: () => {}, ...FAIL_FAST, connection: { application_name: name, ...(ms ? { statement_timeout: ms } : {}) } });
      // A read that finds the replica gone takes it out of service at once: the reads after it
      // go to the primary without waiting for the next check (the failed read itself is a 503).
      const instrument: SqlInstrument = (kind, statement, run) =>
        base(kind, statement, run).catch((err: unknown) => {
          if (lostConnection(err)) this.outOfService(replica());
          throw err;
        });
      return { client, db: drizzlePostgres(instrumentPostgresJs(client, instrument), { schema }) as unknown as Db };
    };
    this.replicas = opts.urls.map((url, index) => {
      const self = () => this.replicas[index]!;
      const reads = open(url, opts.poolSize, "media-read", opts.statementTimeoutMs, self);
      const searches = open(url, opts.searchPoolSize, "media-read-search", searchTimeout, self);
      return { ...reads, searchDb: searches.db, searchClient: searches.client, freshAsOf: Number.NEGATIVE_INFINITY };
    });
  }

  /** Starts the checks; the first one has run when this resolves. */
  async start(): Promise<void> {
    await this.check();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.check().finally(() => this.schedule()), this.checkMs);
    this.timer.unref?.();
  }

  /** Samples the primary, then asks each replica how far it has replayed. */
  async check(): Promise<void> {
    const at = this.now();
    try {
      // The insert position, not the write position: with synchronous_commit off a transaction
      // returns before its commit record is written, and a sample must cover every commit before it.
      const [row] = await within(this.primary`select pg_current_wal_insert_lsn()::text as lsn`, this.opts.maxLagMs);
      this.samples.push({ at, lsn: parseLsn(row!.lsn) });
    } catch {
      // The primary did not answer: no new sample, so the replicas age out of the bound as
      // they would if it were writing; reads then go to the primary, whose own errors show.
    }
    this.samples = this.samples.filter((s) => s.at >= this.now() - this.opts.maxLagMs);
    await Promise.all(this.replicas.map((r, i) => this.checkReplica(r, i)));
  }

  private async checkReplica(replica: Replica, index: number): Promise<void> {
    const wasServing = this.serving(replica);
    try {
      const [row] = await within(replica.client`select pg_is_in_recovery() as recovering, pg_last_wal_replay_lsn()::text as lsn`, this.opts.maxLagMs);
      // A server not in recovery (a promoted replica, or the primary itself) has all it will get.
      const replayed = row!.recovering ? (row!.lsn ? parseLsn(row!.lsn) : -1n) : null;
      let fresh = Number.NEGATIVE_INFINITY;
      for (const s of this.samples) if (replayed === null || s.lsn <= replayed) fresh = Math.max(fresh, s.at);
      // A sample is the only proof; without one in the bound the replica keeps what it had proved.
      replica.freshAsOf = Math.max(replica.freshAsOf, fresh);
    } catch {
      replica.freshAsOf = Number.NEGATIVE_INFINITY;
    }
    const serving = this.serving(replica);
    if (serving !== wasServing) this.opts.onChange?.(index, serving);
  }

  private outOfService(replica: Replica): void {
    const was = this.serving(replica);
    replica.freshAsOf = Number.NEGATIVE_INFINITY;
    if (was) this.opts.onChange?.(this.replicas.indexOf(replica), false);
  }

  private serving(replica: Replica): boolean {
    return this.now() - replica.freshAsOf <= this.opts.maxLagMs;
  }

  replicaFor(orgId: string, purpose: ReadPurpose): Db | null {
    if (this.wroteRecently(this.wroteUntil.data, orgId)) return null;
    if (purpose === "usage" && this.wroteRecently(this.wroteUntil.usage, orgId)) return null;
    // Each organization keeps to one replica while it serves (by a hash of its id): its reads do
    // not step back in time between two replicas that lag differently, and a search's hits and
    // the views read after it come from the same one. Organizations spread over the replicas.
    const serving = this.replicas.filter((r) => this.serving(r));
    if (serving.length === 0) return null;
    const replica = serving[spread(orgId) % serving.length]!;
    return purpose === "search" ? replica.searchDb : replica.db;
  }

  private wroteRecently(marks: Map<string, number>, orgId: string): boolean {
    const until = marks.get(orgId);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    marks.delete(orgId);
    return false;
  }

  wrote(orgId: string, what: "data" | "usage" = "data", commitsWithinMs = 0): void {
    const now = this.now();
    const marks = this.wroteUntil[what];
    marks.set(orgId, Math.max(marks.get(orgId) ?? 0, now + commitsWithinMs + this.opts.maxLagMs));
    // Organizations that wrote once and never read again would otherwise stay in the map.
    if (marks.size > 10_000) for (const [org, until] of marks) if (until <= now) marks.delete(org);
  }

  /** How many replicas serve reads now (metrics, tests). */
  servingCount(): number {
    return this.replicas.filter((r) => this.serving(r)).length;
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all([this.primary.end({ timeout: 5 }), ...this.replicas.flatMap((r) => [r.client.end({ timeout: 5 }), r.searchClient.end({ timeout: 5 })])]);
  }
}

/**
 * The replica went away under the read: refused, closed, or shutting down (57P01-57P03), or
 * any connection failure class (08). A statement it refused (a timeout, bad SQL) is not this.
 */
function lostConnection(err: unknown): boolean {
  const code = String((err as { code?: unknown } | null)?.code ?? "");
  return /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|CONNECT_TIMEOUT|CONNECTION_(CLOSED|ENDED|DESTROYED)|57P0[123]|08...)$/.test(code);
}

/** A stable, well spread number for an id. */
function spread(id: string): number {
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** The check's answer, or a failure after `ms`: a replica that accepts and never answers is as good as down. */
async function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("replica check timed out")), ms);
  });
  try {
    return await Promise.race([p, expired]);
  } finally {
    clearTimeout(timer);
  }
}
