import type Redis from "ioredis";
import { type GcraParams, type RateDecision, remainingAfter } from "../../../domain/guards/rate-limit.ts";
import type { BeginResult, Claim, GuardStores, IdempotencyStore, RateLimitStore, ReplayStore, Sealed } from "./ports.ts";

/**
 * The guard stores on Redis, shared by every instance. Each operation is one Lua script, so
 * it is atomic and costs one round trip (EVALSHA; ioredis falls back to EVAL once per script
 * after a Redis restart). Logical time comes from the caller's clock (ARGV), so expiry follows
 * the injected clock in tests; Redis TTLs only collect garbage and are never shorter than
 * the logical lifetime. The keys of one takeAll are not hash-tagged: Redis Cluster
 * would need that; a single Redis (or a primary with replicas) is assumed.
 */

// take(): the same steps as gcra() in domain/guards/rate-limit.ts; keep them in step. Integers in
// microseconds, stored with %.0f because Lua would print a 16-digit number in exponent form.
//
// begin(): an idempotency record is one string, "<state>\n<logical expiry, ms>\n<payload>":
// state p (pending) with the owner as payload, or d (done) with the sealed response. One
// string keeps every script to a GET and a SET (owners and sealed responses hold no newline).
const FUNCTIONS = `
local function take(key, now, interval, window)
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now or tat > now + window then tat = now end
  local nxt = tat + interval
  local allow_at = nxt - window
  if now < allow_at then
    return {0, tat - now, allow_at - now}
  end
  redis.call('SET', key, string.format('%.0f', nxt), 'PX', math.max(1, math.ceil((nxt - now) / 1000)))
  return {1, nxt - now, 0}
end

local function record(key)
  local v = redis.call('GET', key)
  if not v then return nil end
  local a = string.find(v, '\\n', 3, true)
  return string.sub(v, 1, 1), tonumber(string.sub(v, 3, a - 1)), string.sub(v, a + 1)
end

local function begin(key, now, owner, until_ms, lease_ms)
  local state, expiry, payload = record(key)
  if state and expiry > tonumber(now) then
    if state == 'd' then return {'done', payload} end
    return {'in_flight'}
  end
  redis.call('SET', key, 'p\\n' .. until_ms .. '\\n' .. owner, 'PX', lease_ms)
  return {'acquired'}
end
`;

const GCRA_TAKE = `${FUNCTIONS}
return take(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))`;

const IDEM_BEGIN = `${FUNCTIONS}
return begin(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])`;

// KEYS: the n rate-limit buckets, then the idempotency key when a claim is made. ARGV: now (µs),
// n, each bucket's interval and window, then the claim's arguments. Returns each bucket's take
// result up to the first refusal, followed by the begin result when every bucket allowed it.
const TAKE_ALL = `${FUNCTIONS}
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local out = {}
for i = 1, n do
  local d = take(KEYS[i], now, tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i]))
  out[#out + 1] = d[1]
  out[#out + 1] = d[2]
  out[#out + 1] = d[3]
  if d[1] == 0 then return out end
end
if #KEYS > n then
  local a = 2 * n + 3
  local b = begin(KEYS[n + 1], ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3])
  out[#out + 1] = b[1]
  out[#out + 1] = b[2]
end
return out`;

// Only the owner's pending claim may be completed or released; an absent record (its lease ran
// out and nobody took over) may be completed.
const IDEM_COMPLETE = `${FUNCTIONS}
local state, _, owner = record(KEYS[1])
if state and not (state == 'p' and owner == ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], 'd\\n' .. ARGV[2] .. '\\n' .. ARGV[3], 'PX', ARGV[4])
return 1`;

const IDEM_RELEASE = `${FUNCTIONS}
local state, _, owner = record(KEYS[1])
if state == 'p' and owner == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

type Take = [number, number, number];
type Begin = [string, string?];

interface GuardCommands {
  guardGcraTake(key: string, now: number, interval: number, window: number): Promise<Take>;
  guardIdemBegin(key: string, now: number, owner: string, until: number, leaseMs: number): Promise<Begin>;
  /** numberOfKeys first (the script takes a variable number of keys), then KEYS, then ARGV. */
  guardTakeAll(...args: (string | number)[]): Promise<(number | string)[]>;
  guardIdemComplete(key: string, owner: string, until: number, response: string, retentionMs: number): Promise<number>;
  guardIdemRelease(key: string, owner: string): Promise<number>;
}

type GuardRedis = Redis & GuardCommands;

function withCommands(redis: Redis): GuardRedis {
  // defineCommand is idempotent per name; the scripts are cached by SHA on the server.
  redis.defineCommand("guardGcraTake", { numberOfKeys: 1, lua: GCRA_TAKE });
  redis.defineCommand("guardIdemBegin", { numberOfKeys: 1, lua: IDEM_BEGIN });
  redis.defineCommand("guardTakeAll", { lua: TAKE_ALL });
  redis.defineCommand("guardIdemComplete", { numberOfKeys: 1, lua: IDEM_COMPLETE });
  redis.defineCommand("guardIdemRelease", { numberOfKeys: 1, lua: IDEM_RELEASE });
  return redis as GuardRedis;
}

function decisionOf([allowed, aheadUs, retryAfterUs]: Take, params: GcraParams): RateDecision {
  if (allowed === 1) return { allowed: true, ...remainingAfter(aheadUs, params), retryAfterUs: 0 };
  return { allowed: false, remaining: 0, resetUs: aheadUs, retryAfterUs };
}

function beginOf([state, response]: Begin): BeginResult {
  if (state === "done") return { state, response: response ?? "" };
  return { state: state === "in_flight" ? "in_flight" : "acquired" };
}

class Keys {
  constructor(private readonly prefix: string) {}
  rateLimit(key: string): string {
    return `${this.prefix}:rl:${key}`;
  }
  idempotency(id: string): string {
    return `${this.prefix}:idem:${id}`;
  }
  replay(id: string): string {
    return `${this.prefix}:sig:${id}`;
  }
}

export class RedisRateLimitStore implements RateLimitStore {
  constructor(
    private readonly redis: GuardRedis,
    private readonly keys: Keys,
  ) {}

  async take(key: string, nowUs: number, params: GcraParams): Promise<RateDecision> {
    return decisionOf(await this.redis.guardGcraTake(this.keys.rateLimit(key), nowUs, params.intervalUs, params.windowUs), params);
  }
}

export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly redis: GuardRedis,
    private readonly keys: Keys,
  ) {}

  async begin({ id, owner, nowMs, leaseMs }: Claim): Promise<BeginResult> {
    return beginOf(await this.redis.guardIdemBegin(this.keys.idempotency(id), nowMs, owner, nowMs + leaseMs, leaseMs));
  }

  async complete(id: string, owner: string, response: Sealed, nowMs: number, retentionMs: number): Promise<void> {
    await this.redis.guardIdemComplete(this.keys.idempotency(id), owner, nowMs + retentionMs, response, retentionMs);
  }

  async release(id: string, owner: string): Promise<void> {
    await this.redis.guardIdemRelease(this.keys.idempotency(id), owner);
  }
}

/** Accepted signatures, shared by every instance: one SET NX per signed request. */
export class RedisReplayStore implements ReplayStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  async firstUse(id: string, _nowMs: number, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.keys.replay(id), "1", "PX", ttlMs, "NX")) === "OK";
  }
}

/** Stores on a connection owned by the caller (app/services.ts closes it). */
export function redisGuardStores(redis: Redis, prefix: string): GuardStores {
  const r = withCommands(redis);
  const keys = new Keys(prefix);
  return {
    kind: "redis",
    rateLimit: new RedisRateLimitStore(r, keys),
    idempotency: new RedisIdempotencyStore(r, keys),
    replay: new RedisReplayStore(redis, keys),
    takeAll: async (buckets, nowUs, claim) => {
      const rlKeys = buckets.map((b) => keys.rateLimit(b.key));
      const policies = buckets.flatMap((b) => [b.params.intervalUs, b.params.windowUs]);
      const args = claim
        ? [rlKeys.length + 1, ...rlKeys, keys.idempotency(claim.id), nowUs, buckets.length, ...policies, claim.nowMs, claim.owner, claim.nowMs + claim.leaseMs, claim.leaseMs]
        : [rlKeys.length, ...rlKeys, nowUs, buckets.length, ...policies];
      const reply = await r.guardTakeAll(...args);
      const decisions: RateDecision[] = [];
      for (let i = 0; i < buckets.length && 3 * i < reply.length; i++) {
        decisions.push(decisionOf(reply.slice(3 * i, 3 * i + 3) as Take, buckets[i]!.params));
      }
      const allowed = decisions.length === buckets.length && decisions.every((d) => d.allowed);
      return { decisions, begun: claim && allowed ? beginOf(reply.slice(3 * buckets.length) as Begin) : null };
    },
    close: async () => {},
  };
}
