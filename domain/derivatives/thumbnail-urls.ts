import { createHmac, timingSafeEqual } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import type { Thumbnail } from "../../contract/media.ts";
import { derivatives, mediaObjects, mediaSettings } from "../../db/schema/index.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { THUMBNAIL, thumbnailOf } from "./derivatives.ts";
import { signingKey } from "./render-urls.ts";

/*
 * Signed thumbnail paths, handed out with a listing: a page of 100 tiles loads its pictures
 * without a credential, so they never spend the caller's per-minute budget. The signature
 * covers the object, the thumbnail's etag and the expiry, so a new thumbnail is a new URL.
 */

const DAY_S = 86_400;

/**
 * Expiries fall on day boundaries, one to two days ahead: every listing of a day signs the
 * same URL, which the browser's cache then serves instead of asking again.
 */
function expiryFor(now: Date): number {
  return (Math.floor(now.getTime() / 1000 / DAY_S) + 2) * DAY_S;
}

function signature(secret: string, objectId: string, etag: string, expires: number): string {
  return createHmac("sha256", secret).update(`thumbnail:${objectId}:${etag}:${expires}`).digest("base64url");
}

/**
 * Signs thumbnail paths for the organization's objects (one key lookup): the signer gives the
 * path of an object's ready thumbnail by its etag.
 */
export async function thumbnailPathSigner(deps: Pick<Deps, "db" | "clock">, orgId: string): Promise<(objectId: string, etag: string) => string> {
  const secret = await signingKey(deps, orgId);
  const expires = expiryFor(deps.clock.now());
  return (objectId, etag) => `/api/thumbnails/${objectId}?${new URLSearchParams({ v: etag, expires: String(expires), signature: signature(secret, objectId, etag, expires) })}`;
}

/**
 * The thumbnail a signed path names, once its signature and expiry check out. Every failure
 * is the same 403 (an expired one says so): a path reveals nothing about other objects.
 */
export async function verifyThumbnailPath(deps: Deps, id: string, etag: string, expires: number, sig: string): Promise<Thumbnail> {
  const denied = () => errors.forbidden("This thumbnail URL is not valid");
  if (!Number.isSafeInteger(expires) || !/^[0-9a-f-]{36}$/i.test(id)) throw denied();
  const [row] = await deps.db
    .select({ object: mediaObjects, secret: mediaSettings.renderSecret, thumb: derivatives })
    .from(mediaObjects)
    .innerJoin(mediaSettings, eq(mediaSettings.orgId, mediaObjects.orgId))
    .innerJoin(derivatives, and(eq(derivatives.objectId, mediaObjects.id), eq(derivatives.variant, THUMBNAIL)))
    .where(and(eq(mediaObjects.id, id), isNull(mediaObjects.deletedAt)));
  const expected = row ? Buffer.from(signature(row.secret, id, etag, expires)) : null;
  const given = Buffer.from(sig);
  if (!row || !expected || expected.length !== given.length || !timingSafeEqual(expected, given)) throw denied();
  if (expires * 1000 < deps.clock.now().getTime()) throw errors.forbidden("This thumbnail URL has expired");
  const t = row.thumb;
  // A thumbnail made again since the listing is another URL: this one names bytes now gone.
  if (t.state !== "ready" || t.etag !== etag || !t.contentType) throw errors.notFound("Thumbnail");
  return thumbnailOf({ id, bucketId: row.object.bucketId }, { ...t, etag, contentType: t.contentType });
}
