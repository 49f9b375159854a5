/**
 * The soak load, shared by `npm run bench -- soak` (minutes, with memory samples) and
 * test/hardening/soak.test.ts (seconds, exactness only): a steady rate of mixed operations
 * against a real server, each started on its tick whether or not earlier ones are done, so a
 * slow server shows up as operations in flight rather than as a lower rate.
 *
 * Mix per tick, in turn: an upload (presign, PUT to storage, confirm), a presigned download
 * (counted as egress), then reads (list, one object, usage). Every answer must be 2xx; the
 * bookkeeping (sizes confirmed, egress issued, authenticated calls made) is what the server's
 * usage must equal at the end.
 */
import type { Api } from "../test/support/http.ts";
import type { TestOrg, TestServer } from "../test/support/server.ts";

export interface SoakOptions {
  seconds: number;
  /** Operations started per second. */
  rate: number;
  /** Called about once a second (memory samples in the bench). */
  onSecond?: (elapsedSeconds: number) => void;
}

export interface SoakResult {
  operations: number;
  /** Authenticated API requests made (each counts towards apiCallsThisMonth). */
  apiCalls: number;
  uploads: number;
  bytesConfirmed: number;
  egressIssued: number;
  errors: string[];
  /** Most operations in flight at once. */
  maxInFlight: number;
  latenciesMs: number[];
  elapsedSeconds: number;
}

const MAX_ERRORS_KEPT = 20;

/** Sizes vary (1 byte .. 48 KiB) so a lost or doubled count cannot hide in a round number. */
function sizeFor(n: number): number {
  return 1 + ((n * 7919) % (48 * 1024));
}

export async function runSoak(server: TestServer, org: TestOrg, bucketId: string, opts: SoakOptions): Promise<SoakResult> {
  const api: Api = org.admin;
  const result: SoakResult = {
    operations: 0,
    apiCalls: 0,
    uploads: 0,
    bytesConfirmed: 0,
    egressIssued: 0,
    errors: [],
    maxInFlight: 0,
    latenciesMs: [],
    elapsedSeconds: 0,
  };
  const confirmed: { id: string; size: number }[] = [];
  const fail = (what: string) => {
    if (result.errors.length < MAX_ERRORS_KEPT) result.errors.push(what);
    else result.errors.length++;
  };
  const call = async (method: "GET" | "POST", path: string, body?: unknown) => {
    result.apiCalls++;
    const res = method === "GET" ? await api.get(path) : await api.post(path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    return res.body;
  };

  const operations: ((n: number) => Promise<void>)[] = [
    async (n) => {
      const size = sizeFor(n);
      const key = `soak/${n}.bin`;
      const signed = await call("POST", "/api/presign/upload", { bucketId, key, contentType: "application/octet-stream", size });
      const put = await fetch(signed.url, { method: "PUT", headers: signed.headers, body: new Uint8Array(size).fill(n & 0xff) });
      await put.body?.cancel();
      if (put.status !== 200) throw new Error(`PUT to storage: ${put.status}`);
      const media = await call("POST", "/api/presign/confirm", { bucketId, key });
      if (media.size !== size) throw new Error(`confirm of ${key} says ${media.size} bytes, sent ${size}`);
      confirmed.push({ id: media.id, size });
      result.uploads++;
      result.bytesConfirmed += size;
    },
    async (n) => {
      const target = confirmed[n % Math.max(1, confirmed.length)];
      if (!target) return void (await call("POST", "/api/presign/upload", { bucketId, key: `soak/never-${n}.bin` }));
      await call("POST", "/api/presign/download", { objectId: target.id });
      result.egressIssued += target.size;
    },
    async () => void (await call("GET", `/api/media?bucketId=${bucketId}&limit=20`)),
    async (n) => {
      const target = confirmed[(n * 31) % Math.max(1, confirmed.length)];
      await call("GET", target ? `/api/media/${target.id}` : "/api/me");
    },
    async () => void (await call("GET", "/api/usage")),
  ];

  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  const total = Math.round(opts.seconds * opts.rate);
  let lastSecond = 0;
  for (let n = 0; n < total; n++) {
    // Ticks are scheduled from the start time, so a late tick does not shift the ones after it.
    const due = started + (n * 1000) / opts.rate;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    const elapsed = (performance.now() - started) / 1000;
    if (opts.onSecond && Math.floor(elapsed) > lastSecond) {
      lastSecond = Math.floor(elapsed);
      opts.onSecond(elapsed);
    }
    const t0 = performance.now();
    const op: Promise<void> = operations[n % operations.length]!(n)
      .then(() => void result.latenciesMs.push(performance.now() - t0))
      .catch((err) => fail(String(err instanceof Error ? err.message : err)))
      .finally(() => inFlight.delete(op));
    inFlight.add(op);
    result.operations++;
    result.maxInFlight = Math.max(result.maxInFlight, inFlight.size);
  }
  await Promise.all(inFlight);
  result.elapsedSeconds = (performance.now() - started) / 1000;
  return result;
}

/** What the server's usage says, after writing out the API calls counted in memory. */
export async function usageNow(server: TestServer, org: TestOrg): Promise<{ usedStorage: number; objectCount: number; egressThisMonth: number; apiCallsThisMonth: number }> {
  await server.services.apiCalls.flush();
  const res = await org.admin.get("/api/usage");
  if (res.status !== 200) throw new Error(`GET /api/usage: ${res.status}`);
  return res.body;
}
