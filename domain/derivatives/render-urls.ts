import { createHmac, timingSafeEqual } from "node:crypto";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { RenderParams } from "../../contract/render.ts";
import { mediaObjects, mediaSettings } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { prepared } from "../core/prepared.ts";
import { resolveLiveObject } from "../media/object-refs.ts";
import type { MediaRow } from "../media/view.ts";
import { checkRenderLimits } from "./render.ts";
import { newSigningKey } from "./settings.ts";

/* Signed render URLs: usable without a credential (an <img> src), until they expire. */

/**
 * An organization's key never changes once made, so each process keeps the ones it has read:
 * signing a page of thumbnails, or one object's, costs no statement after the first.
 */
const knownKeys = new Map<string, string>();
const KNOWN_KEYS_MAX = 10_000;

/**
 * The organization's signing key, made the first time a URL is signed. Always on the primary
 * (`deps.db` of the caller's own deps, never a replica's handle): it may have to write the key.
 */
export async function signingKey(deps: Pick<Deps, "db">, orgId: string): Promise<string> {
  const known = knownKeys.get(orgId);
  if (known) return known;
  const [row] = await deps.db.select({ secret: mediaSettings.renderSecret }).from(mediaSettings).where(eq(mediaSettings.orgId, orgId));
  let secret = row?.secret;
  if (!secret) {
    await deps.db.insert(mediaSettings).values({ orgId, renderSecret: newSigningKey() }).onConflictDoNothing();
    const [made] = await deps.db.select({ secret: mediaSettings.renderSecret }).from(mediaSettings).where(eq(mediaSettings.orgId, orgId));
    secret = made!.secret;
  }
  if (knownKeys.size >= KNOWN_KEYS_MAX) knownKeys.delete(knownKeys.keys().next().value!);
  knownKeys.set(orgId, secret);
  return secret;
}

/** The query a signed URL carries: the parameters that differ from the defaults, then the expiry. */
export function signedQuery(p: RenderParams): URLSearchParams {
  const q = new URLSearchParams();
  if (p.width !== undefined) q.set("width", String(p.width));
  if (p.height !== undefined) q.set("height", String(p.height));
  if (p.fit !== "inside") q.set("fit", p.fit);
  if (p.format !== "auto") q.set("format", p.format);
  if (p.quality !== 80) q.set("quality", String(p.quality));
  if (p.gravity !== "center") q.set("gravity", p.gravity);
  return q;
}

function signature(secret: string, objectId: string, p: RenderParams, expires: number): string {
  const message = `${objectId}?${signedQuery(p).toString()}&expires=${expires}`;
  return createHmac("sha256", secret).update(message).digest("base64url");
}

export async function signRenderUrl(
  deps: Deps,
  caller: Caller,
  id: string,
  p: RenderParams,
  expiresIn: number,
): Promise<{ path: string; expiresAt: string; expiresIn: number }> {
  checkRenderLimits(deps, p);
  const object = await resolveLiveObject(deps.db, caller, id);
  if (expiresIn > deps.config.render.maxUrlSeconds) {
    throw errors.validation([{ path: "expiresIn", message: `Must be at most ${deps.config.render.maxUrlSeconds}` }]);
  }
  const expires = Math.floor(deps.clock.now().getTime() / 1000) + expiresIn;
  const q = signedQuery(p);
  q.set("expires", String(expires));
  q.set("signature", signature(await signingKey(deps, object.orgId), object.id, p, expires));
  return { path: `/api/render/${object.id}?${q}`, expiresAt: new Date(expires * 1000).toISOString(), expiresIn };
}

/**
 * The object a signed URL names, once its signature and expiry check out. Every failure is
 * the same 403 (expired ones say so): a URL reveals nothing about objects it was not made for.
 */
export async function verifyRenderUrl(deps: Deps, id: string, p: RenderParams, expires: number, sig: string): Promise<MediaRow> {
  const denied = () => errors.forbidden("This render URL is not valid");
  if (!Number.isSafeInteger(expires)) throw denied();
  // Prepared (see prepared.ts): every signed request starts here.
  const [row] = await prepared(deps.db, "signed_render_object", (d) =>
    d
      .select({ object: mediaObjects, secret: mediaSettings.renderSecret })
      .from(mediaObjects)
      .innerJoin(mediaSettings, eq(mediaSettings.orgId, mediaObjects.orgId))
      .where(and(eq(mediaObjects.id, sql.placeholder("id")), isNull(mediaObjects.deletedAt)))
      .prepare("signed_render_object"),
  ).execute({ id });
  const expected = row ? Buffer.from(signature(row.secret, id, p, expires)) : null;
  const given = Buffer.from(sig);
  if (!row || !expected || expected.length !== given.length || !timingSafeEqual(expected, given)) throw denied();
  if (expires * 1000 < deps.clock.now().getTime()) throw errors.forbidden("This render URL has expired");
  return row.object;
}
