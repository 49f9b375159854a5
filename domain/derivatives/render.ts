import { createHash } from "node:crypto";
import { and, eq, inArray, sql } from "drizzle-orm";
import type { RenderParams } from "../../contract/render.ts";
import { rowsOf } from "../../db/client.ts";
import { derivatives } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { AppError, errors } from "../core/errors.ts";
import { prepared } from "../core/prepared.ts";
import { resolveLiveObject } from "../media/object-refs.ts";
import { derivativePrefix, objectPath } from "../media/storage-keys.ts";
import type { MediaRow } from "../media/view.ts";
import type { ImageTransform } from "../ports/images.ts";
import { derivativeKey, RENDER_SOURCE, THUMBNAIL } from "./derivatives.ts";

/**
 * The bytes of renders made or served lately, by storage key, so a cache hit skips the
 * storage round trip. Keys name content (the object's version and every parameter), so an
 * entry can never be stale; it is only served while the render's row says it is cached.
 */
class RecentRenders {
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;
  constructor(
    private readonly maxBytes: number,
    private readonly maxEntryBytes: number,
  ) {}
  get(key: string): Buffer | null {
    const hit = this.entries.get(key);
    if (!hit) return null;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }
  set(key: string, bytes: Buffer): void {
    if (bytes.byteLength > this.maxEntryBytes || this.entries.has(key)) return;
    this.entries.set(key, bytes);
    this.bytes += bytes.byteLength;
    for (const [k, b] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= b.byteLength;
    }
  }
}

/** Memory for recent renders, per server (its database handle). */
const recent = new WeakMap<Deps["db"], RecentRenders>();
export const RECENT_RENDER_BYTES = 64 * 1024 * 1024;
function recentRenders(deps: Deps): RecentRenders {
  let r = recent.get(deps.db);
  if (!r) recent.set(deps.db, (r = new RecentRenders(RECENT_RENDER_BYTES, 1024 * 1024)));
  return r;
}

/** Remembers a render's bytes read back from storage (a hit not in memory yet). */
export function rememberRender(deps: Deps, key: string, bytes: Buffer): void {
  recentRenders(deps).set(key, bytes);
}

/** Cached renders are stored as derivative rows named by this prefix and the render's hash. */
const RENDER_VARIANT = "render-";

export type OutputFormat = ImageTransform["format"];

const EXTENSIONS: Record<OutputFormat, string> = { webp: "webp", avif: "avif", jpeg: "jpg", png: "png" };
const CONTENT_TYPES: Record<OutputFormat, string> = { webp: "image/webp", avif: "image/avif", jpeg: "image/jpeg", png: "image/png" };

/**
 * `auto` is WebP for every client that says it takes it (every current browser, and MCP
 * clients), else JPEG. AVIF is made only when asked for: it is smaller but encodes several
 * times slower, and the first request of every size pays for it.
 */
export function outputFormat(format: RenderParams["format"], accept: string | null | undefined): OutputFormat {
  if (format !== "auto") return format;
  if (accept == null) return "webp";
  return /\bimage\/webp\b/i.test(accept) || /(^|,)\s*(\*\/\*|image\/\*)/.test(accept) ? "webp" : "jpeg";
}

/** A render's identity: the source picture's version and every parameter that changes the bytes. */
export function renderHash(sourceEtag: string, p: RenderParams, format: OutputFormat, metadata: ImageTransform["metadata"]): string {
  const canonical = [sourceEtag, p.width ?? "", p.height ?? "", p.fit, format, p.quality, p.gravity, metadata].join("|");
  return createHash("sha256").update(canonical).digest("hex").slice(0, 32);
}

export function renderKey(bucketId: string, objectId: string, hash: string, format: OutputFormat): string {
  return `${derivativePrefix(bucketId, objectId)}${RENDER_VARIANT}${hash}.${EXTENSIONS[format]}`;
}

/** The size limits a render request must respect, checked before anything is read. */
export function checkRenderLimits(deps: Deps, p: RenderParams): void {
  const max = deps.config.render.maxDimension;
  const problems: { path: string; message: string }[] = [];
  if (p.width !== undefined && p.width > max) problems.push({ path: "width", message: `Must be at most ${max}` });
  if (p.height !== undefined && p.height > max) problems.push({ path: "height", message: `Must be at most ${max}` });
  if (problems.length) throw errors.validation(problems, "The render is larger than this server makes");
}

export interface RenderResult {
  objectId: string;
  bucketId: string;
  contentType: string;
  width: number;
  height: number;
  size: number;
  etag: string;
  cached: boolean;
  /** The bytes, when they were just made; else read them from storage at `key`. */
  bytes: Buffer | null;
  /** Where the render is stored. */
  key: string;
  /** The object's own key (usage events name it). */
  objectKey: string;
}

interface DerivativeFacts {
  variant: string | null;
  state: string | null;
  source_etag: string | null;
  storage_key: string | null;
  size: number | string | null;
  width: number | null;
  height: number | null;
  etag: string | null;
  error: string | null;
  strip: boolean | null;
}

/**
 * What a render needs to know about an object, in one query: its thumbnail's state (is the
 * source picture made yet, or why not), the source picture of a video or PDF, the cached
 * renders this request could be (one per metadata setting), and the organization's setting.
 */
async function renderFacts(deps: Deps, object: MediaRow, variants: string[]): Promise<{ rows: DerivativeFacts[]; strip: boolean }> {
  // Prepared, the variants as one parameter: every render, cached or not, asks this.
  const rows = (await prepared(deps.db, "render_facts", (d) =>
    d
      .select({
        variant: derivatives.variant,
        state: derivatives.state,
        source_etag: derivatives.sourceEtag,
        storage_key: derivatives.storageKey,
        size: derivatives.size,
        width: derivatives.width,
        height: derivatives.height,
        etag: derivatives.etag,
        error: derivatives.error,
        strip: sql<boolean | null>`(select strip_location from media_settings where org_id = ${sql.placeholder("orgId")}::uuid)`,
      })
      .from(sql`(select 1) as one`)
      .leftJoin(
        derivatives,
        and(eq(derivatives.objectId, sql.placeholder("objectId")), sql`${derivatives.variant} = any(string_to_array(${sql.placeholder("variants")}, ','))`),
      )
      .prepare("render_facts"),
  ).execute({ orgId: object.orgId, objectId: object.id, variants: variants.join(",") })) as DerivativeFacts[];
  return { rows: rows.filter((r) => r.variant !== null), strip: rows[0]?.strip ?? true };
}

/** The long edge of the picture a video's or PDF's renders are cut from. */
export const SOURCE_EDGE = 1280;

/**
 * The picture an object's renders are cut from: an image's own bytes; a video's poster frame
 * or a PDF's first page at up to SOURCE_EDGE, made on the first render of the version and kept
 * beside the thumbnail (the `source` derivative), so later renders decode no video or PDF.
 * While the worker has not read the object yet the answer is thumbnail_pending; when it could
 * not (a file that does not decode) thumbnail_unavailable with the reason.
 */
async function sourceBytes(deps: Deps, object: MediaRow, rows: DerivativeFacts[]): Promise<Buffer> {
  const thumb = rows.find((r) => r.variant === THUMBNAIL);
  const current = (r: DerivativeFacts | undefined) => r?.state === "ready" && r.source_etag === object.etag;
  if (!current(thumb)) {
    if (!thumb || thumb.state === "pending" || thumb.state === "ready") {
      throw new AppError("thumbnail_pending", "The picture this object is rendered from is being made; try again in a few seconds", { state: "pending" });
    }
    throw new AppError("thumbnail_unavailable", thumb.error ?? "This object cannot be rendered", { state: thumb.state, reason: thumb.error });
  }
  const read = async (key: string) => {
    const got = await deps.storage.get(key);
    return got ? Buffer.from(await new Response(got.body).arrayBuffer()) : null;
  };
  if (object.kind === "image") {
    if (object.size > deps.config.render.maxSourceBytes) {
      throw new AppError("thumbnail_unavailable", `Images larger than ${Math.round(deps.config.render.maxSourceBytes / 1024 ** 2)} MiB are not rendered on the fly`, { state: "unsupported" });
    }
    const bytes = await read(objectPath(object.bucketId, object.key));
    if (!bytes) throw new AppError("thumbnail_pending", "The object was just replaced; try again", { state: "pending" });
    return bytes;
  }
  const kept = rows.find((r) => r.variant === RENDER_SOURCE);
  if (current(kept) && kept?.storage_key) {
    const bytes = await read(kept.storage_key);
    if (bytes) return bytes;
  }
  let made: Awaited<ReturnType<Deps["images"]["sourcePicture"]>>;
  try {
    made = await deps.images.sourcePicture({ kind: object.kind as "video" | "pdf", storageKey: objectPath(object.bucketId, object.key), etag: object.etag, size: object.size }, SOURCE_EDGE);
  } catch (err) {
    throw new AppError("thumbnail_unavailable", err instanceof Error ? err.message : "The picture could not be made", { state: "failed" });
  }
  const etag = createHash("sha256").update(made.bytes).digest("hex").slice(0, 32);
  const key = derivativeKey({ bucketId: object.bucketId, objectId: object.id, variant: RENDER_SOURCE, etag, contentType: made.contentType });
  await deps.storage.put(key, made.bytes, { contentType: made.contentType });
  const recorded = await recordDerivative(deps, object, { variant: RENDER_SOURCE, key, size: made.bytes.byteLength, width: made.width, height: made.height, contentType: made.contentType, etag });
  if (!recorded) await deps.storage.delete(key).catch(() => {});
  return made.bytes;
}

/**
 * A render of an object: from the cache when this very render was made before (same object
 * version, same parameters, same metadata setting), else made now, stored beside the object's
 * other derivatives and counted against the organization's render cache.
 */
export async function renderObject(deps: Deps, object: MediaRow, p: RenderParams, accept: string | null | undefined): Promise<RenderResult> {
  checkRenderLimits(deps, p);
  if (object.kind !== "image" && object.kind !== "video" && object.kind !== "pdf") {
    throw new AppError("thumbnail_unavailable", "Renders are made of images, videos (their poster) and PDFs (their first page)", { state: "unsupported" });
  }
  const format = outputFormat(p.format, accept);
  // The object's ETag names the source too: the worker remakes a poster or page only for a new version.
  const version = object.etag ?? String(object.updatedAt.getTime());
  const modes: ImageTransform["metadata"][] = object.kind === "image" ? ["exif-without-location", "exif"] : ["none"];
  const hashes = modes.map((m) => renderHash(version, p, format, m));
  const { rows, strip } = await renderFacts(deps, object, [THUMBNAIL, RENDER_SOURCE, ...hashes.map((h) => `${RENDER_VARIANT}${h}`)]);
  const metadata = object.kind !== "image" ? "none" : strip ? "exif-without-location" : "exif";
  const hash = hashes[modes.indexOf(metadata)]!;
  const key = renderKey(object.bucketId, object.id, hash, format);
  const base = { objectId: object.id, bucketId: object.bucketId, objectKey: object.key, contentType: CONTENT_TYPES[format], etag: hash, key };
  const cached = rows.find((r) => r.variant === `${RENDER_VARIANT}${hash}` && r.state === "ready" && r.source_etag === object.etag);
  if (cached) return { ...base, width: cached.width ?? 0, height: cached.height ?? 0, size: Number(cached.size ?? 0), cached: true, bytes: recentRenders(deps).get(key) };

  // Reading and decoding the source is the expensive part: it holds one of the organization's
  // render slots, so one organization cannot take every core (a cached render takes none).
  const make = async () => {
    const input = await sourceBytes(deps, object, rows);
    try {
      return await deps.images.transform(input, { width: p.width, height: p.height, fit: p.fit, format, quality: p.quality, gravity: p.gravity, metadata }, { maxPixels: deps.config.render.maxPixels });
    } catch (err) {
      throw new AppError("thumbnail_unavailable", err instanceof Error ? err.message : "The picture could not be rendered", { state: "failed" });
    }
  };
  const made = deps.concurrency ? await deps.concurrency.render.run(object.orgId, make) : await make();
  await deps.storage.put(key, made.bytes, { contentType: made.contentType });
  const kept = await recordDerivative(deps, object, { variant: `${RENDER_VARIANT}${hash}`, key, size: made.bytes.byteLength, width: made.width, height: made.height, contentType: made.contentType, etag: hash });
  if (kept) {
    await trimRenderCache(deps, object.orgId);
    recentRenders(deps).set(key, made.bytes);
  } else await deps.storage.delete(key).catch(() => {});
  return { ...base, width: made.width, height: made.height, size: made.bytes.byteLength, cached: false, bytes: made.bytes };
}

/**
 * Records a derivative made on request (a render, or a video's or PDF's source picture) for the
 * object version it was made from; false when the object changed meanwhile (the caller deletes
 * the bytes, which belong to nothing).
 */
async function recordDerivative(deps: Deps, object: MediaRow, r: { variant: string; key: string; size: number; width: number; height: number; contentType: string; etag: string }): Promise<boolean> {
  const result = await deps.db.execute(sql`
    insert into derivatives (object_id, variant, state, source_etag, storage_key, content_type, size, width, height, etag, attempts, updated_at)
    select id, ${r.variant}, 'ready', etag, ${r.key}, ${r.contentType}, ${r.size}::bigint, ${r.width}::int, ${r.height}::int, ${r.etag}, 1, ${deps.clock.now().toISOString()}::timestamptz
    from media_objects where id = ${object.id} and deleted_at is null and etag is not distinct from ${object.etag}::text
    on conflict (object_id, variant) do update set
      source_etag = excluded.source_etag, storage_key = excluded.storage_key, content_type = excluded.content_type,
      size = excluded.size, width = excluded.width, height = excluded.height, etag = excluded.etag, updated_at = excluded.updated_at
    returning 1`);
  return rowsOf(result).length > 0;
}

/** Deletes the organization's oldest cached renders until the rest fit in its cache size. */
export async function trimRenderCache(deps: Deps, orgId: string): Promise<number> {
  const limit = deps.config.render.cacheBytesPerOrg;
  const rows = rowsOf<{ id: string; storage_key: string; size: number | string; running: number | string }>(
    await deps.db.execute(sql`
      select id, storage_key, size, running from (
        select d.id, d.storage_key, d.size, sum(d.size) over (order by d.updated_at desc, d.id desc) as running
        from derivatives d join media_objects o on o.id = d.object_id
        where o.org_id = ${orgId} and d.variant like ${`${RENDER_VARIANT}%`}
      ) t where running > ${limit}`),
  );
  if (rows.length === 0) return 0;
  await deps.db.delete(derivatives).where(inArray(derivatives.id, rows.map((r) => r.id)));
  for (const r of rows) await deps.storage.delete(r.storage_key).catch((err) => deps.log.warn("deleting an evicted render failed", { key: r.storage_key, error: String(err) }));
  return rows.length;
}

/** Bytes of cached renders an organization keeps (for tests and the docs' limits). */
export async function renderCacheBytes(deps: Deps, orgId: string): Promise<number> {
  const [row] = rowsOf<{ bytes: number | string | null }>(
    await deps.db.execute(sql`select coalesce(sum(d.size), 0) as bytes from derivatives d join media_objects o on o.id = d.object_id where o.org_id = ${orgId} and d.variant like ${`${RENDER_VARIANT}%`}`),
  );
  return Number(row?.bytes ?? 0);
}

export async function renderForCaller(deps: Deps, caller: Caller, id: string, p: RenderParams, accept: string | null | undefined): Promise<RenderResult> {
  return renderObject(deps, await resolveLiveObject(deps.db, caller, id), p, accept);
}
