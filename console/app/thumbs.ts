import { errorOf, rateLimit, restRequest, retryAfterMs, route, sleep, token } from "./api.ts";

/**
 * Thumbnails need the bearer, so an <img> cannot fetch them itself: they are fetched here and
 * shown as blob URLs. A URL carrying the thumbnail's etag (`?v=`) is cacheable for good, so
 * a revisit is served by the browser cache. A few at a time, newest request first, so a fast
 * scroll does not queue hundreds of thumbnails nobody sees any more.
 */
const MAX_PARALLEL = 6;
const KEEP = 800;

interface Entry {
  url: Promise<string | null>;
  resolved?: string | null;
}

interface Waiting {
  key: string;
  id: string;
  etag: string;
  entry: Entry;
  resolve: (url: string | null) => void;
}

const cache = new Map<string, Entry>();
const waiting: Waiting[] = [];
let running = 0;

export function cachedThumbnail(id: string, etag: string): string | null | undefined {
  return cache.get(`${id}:${etag}`)?.resolved;
}

export function thumbnail(id: string, etag: string): Promise<string | null> {
  const key = `${id}:${etag}`;
  const hit = cache.get(key);
  if (hit) {
    // Recently used moves to the end, so the oldest are dropped first.
    cache.delete(key);
    cache.set(key, hit);
    return hit.url;
  }
  const entry = {} as Entry;
  entry.url = new Promise<string | null>((resolve) => waiting.push({ key, id, etag, entry, resolve }));
  cache.set(key, entry);
  trim();
  pump();
  return entry.url;
}

/** Drops queued requests for tiles no longer on screen (their promises resolve to null). */
export function cancelQueued(keep: Set<string>): void {
  for (let i = waiting.length - 1; i >= 0; i--) {
    const w = waiting[i]!;
    if (keep.has(w.key)) continue;
    waiting.splice(i, 1);
    cache.delete(w.key);
    w.resolve(null);
  }
}

function trim() {
  while (cache.size > KEEP) {
    const [key, entry] = cache.entries().next().value as [string, Entry];
    cache.delete(key);
    if (entry.resolved) URL.revokeObjectURL(entry.resolved);
  }
}

function pump() {
  while (running < MAX_PARALLEL && waiting.length > 0) {
    // Last in, first out: what was asked for last is what is on screen now.
    const next = waiting.pop()!;
    running++;
    void (async () => {
      const url = await load(next.id, next.etag).catch(() => null);
      next.entry.resolved = url;
      if (url === null) cache.delete(next.key);
      next.resolve(url);
      running--;
      pump();
    })();
  }
}

async function load(id: string, etag: string): Promise<string | null> {
  const secret = token.value;
  if (!secret) return null;
  const req = restRequest(route("media_thumbnail"), { id, v: etag });
  // A 429 says when to come back: every loader waits that long and asks again, however many
  // 429s it meets (counted attempts gave up while the page's other calls took the room), and
  // gives way while a page call waits for its turn.
  for (;;) {
    const wait = rateLimit.until - Date.now();
    // A little past the pause, so a page call that waited with them goes first.
    if (wait > 0) await sleep(wait + 100);
    else if (rateLimit.callsWaiting > 0) await sleep(250);
    if (rateLimit.until > Date.now() || rateLimit.callsWaiting > 0) continue;
    if (token.value !== secret) return null;
    const response = await fetch(req.url, { headers: { authorization: `Bearer ${secret}` } });
    if (response.ok) return URL.createObjectURL(await response.blob());
    if (response.status === 429) {
      rateLimit.until = Math.max(rateLimit.until, Date.now() + retryAfterMs(response));
      continue;
    }
    // Pending, unavailable or gone: the tile shows its placeholder instead.
    await errorOf(response);
    return null;
  }
}
