import Redis from "ioredis";
import type { Logger } from "../domain/ports/log.ts";

export interface RedisConnection {
  client: Redis;
  close(): Promise<void>;
}

/**
 * A Redis connection for request-path work (rate limit, idempotency), built to fail fast:
 * while Redis is down, commands reject at once instead of queueing (no offline queue, no
 * retries), and a hung server costs at most `commandTimeout`. Reconnection continues in the
 * background with backoff. Connection loss and recovery are logged once each, not per retry.
 *
 * Not for BullMQ: its blocking workers need `maxRetriesPerRequest: null` and their own connections.
 */
export async function openRedis(url: string, log: Logger, opts: { commandTimeoutMs?: number; connectTimeoutMs?: number } = {}): Promise<RedisConnection> {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: opts.commandTimeoutMs ?? 500,
    connectTimeout: opts.connectTimeoutMs ?? 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  const where = redactedUrl(url);
  let down = false;
  let closing = false;
  // A refused connection reports "error"; a server that goes away cleanly only "close".
  const lost = (reason: string) => {
    if (down || closing) return;
    down = true;
    log.warn("redis unreachable; guards fail open until it returns", { redis: where, error: reason });
  };
  client.on("error", (err: Error) => lost(err.message));
  client.on("close", () => lost("connection closed"));
  client.on("ready", () => {
    if (!down) return;
    down = false;
    log.info("redis reachable again", { redis: where });
  });
  // Start-up does not wait for Redis: the service runs (guards open) and joins Redis when it comes.
  await client.connect().catch(() => {});
  return {
    client,
    close: async () => {
      closing = true;
      if (client.status === "ready") await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}

function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(invalid url)";
  }
}
