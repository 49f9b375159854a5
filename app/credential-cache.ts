import type { Logger } from "../domain/ports/log.ts";
import type { CredentialCache, KeyCredential } from "../domain/ports/credentials.ts";
import type { RedisConnection } from "./redis.ts";

type Target = { keyId: string } | { bucketId: string };

/**
 * API keys authenticated on this instance, for `ttlMs` at most. The TTL is only a backstop:
 * `forget` removes entries at once. A version number, bumped by every forget, drops fills
 * whose database read may predate the change (read version, query, put: the put is refused
 * if a forget came in between).
 */
export class MemoryCredentialCache implements CredentialCache {
  private readonly entries = new Map<string, { key: KeyCredential; until: number }>();
  private current = 0;
  private enabled: boolean;
  /** Tells other instances; absent when this is the only instance (no Redis). */
  broadcast: ((target: Target) => Promise<void>) | null = null;

  constructor(
    private readonly opts: { ttlMs: number; maxEntries: number },
    enabled = true,
  ) {
    this.enabled = enabled;
  }

  version(): number {
    return this.current;
  }

  get(secretHash: string): KeyCredential | undefined {
    if (!this.enabled) return undefined;
    const entry = this.entries.get(secretHash);
    if (!entry) return undefined;
    if (entry.until <= performance.now()) {
      this.entries.delete(secretHash);
      return undefined;
    }
    return entry.key;
  }

  put(secretHash: string, key: KeyCredential, version: number): void {
    if (!this.enabled || version !== this.current) return;
    if (this.entries.size >= this.opts.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(secretHash, { key, until: performance.now() + this.opts.ttlMs });
  }

  async forget(target: Target): Promise<void> {
    this.forgetHere(target);
    await this.broadcast?.(target);
  }

  forgetHere(target: Target): void {
    this.current++;
    for (const [hash, { key }] of this.entries) {
      if ("keyId" in target ? key.id === target.keyId : key.bucketId === target.bucketId) this.entries.delete(hash);
    }
  }

  /** While invalidations may be missed (no subscription), nothing is served from memory. */
  setEnabled(on: boolean): void {
    if (!on) {
      this.current++;
      this.entries.clear();
    }
    this.enabled = on;
  }

  get size(): number {
    return this.entries.size;
  }
}

export const CREDENTIAL_TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

/** No Redis: one instance, so forgetting locally is forgetting everywhere. */
export function localCredentialCache(): MemoryCredentialCache {
  return new MemoryCredentialCache({ ttlMs: CREDENTIAL_TTL_MS, maxEntries: MAX_ENTRIES });
}

/**
 * With Redis: forgets are published on `<prefix>:credentials` and every instance, subscribed
 * on its own connection, drops the entry. The cache serves entries only while that
 * subscription is live; when the subscriber loses Redis the cache is emptied and bypassed
 * (every request reads PostgreSQL) until it has subscribed again, so a missed message cannot
 * leave a rotated or deleted key working. What remains: the time a message takes to arrive
 * (sub-millisecond, like a request already in flight when the rotation committed), and a
 * publish that fails while the subscribers still see Redis (a partition of the rotating
 * instance alone), which the 10 s TTL bounds; that failure is logged.
 */
export async function sharedCredentialCache(redis: RedisConnection, prefix: string, log: Logger): Promise<{ cache: MemoryCredentialCache; close(): Promise<void> }> {
  const channel = `${prefix}:credentials`;
  const cache = new MemoryCredentialCache({ ttlMs: CREDENTIAL_TTL_MS, maxEntries: MAX_ENTRIES }, false);
  cache.broadcast = async (target) => {
    await redis.client.publish(channel, JSON.stringify(target)).catch((err: Error) => {
      log.warn("could not tell other instances to forget an API key; their copies expire within the cache TTL", { error: err.message, ttlMs: CREDENTIAL_TTL_MS });
    });
  };
  const sub = redis.client.duplicate({ autoResubscribe: false });
  sub.on("error", () => {}); // app/redis.ts logs the outage once, from the main connection
  sub.on("close", () => cache.setEnabled(false));
  sub.on("ready", () => {
    sub.subscribe(channel).then(
      () => cache.setEnabled(true),
      () => cache.setEnabled(false),
    );
  });
  sub.on("message", (_channel: string, message: string) => {
    try {
      cache.forgetHere(JSON.parse(message) as Target);
    } catch {
      // Not ours to understand: forgetting everything is always safe.
      cache.setEnabled(false);
      cache.setEnabled(true);
    }
  });
  await sub.connect().catch(() => {});
  return {
    cache,
    close: async () => {
      sub.removeAllListeners("close");
      sub.disconnect();
    },
  };
}
