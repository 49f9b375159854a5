import { createHash } from "node:crypto";
import type { Deps } from "../core/deps.ts";
import { AppError, errors } from "../core/errors.ts";
import type { ReplayStore } from "../ports/replay.ts";
import type { Caller, Scope } from "./caller.ts";
import { digestMatches, hmac, parseSignedHeaders, sameSignature, signatureBase } from "./http-signatures.ts";
import { credentialByKeyId } from "./service-credentials.ts";

/**
 * A signed service-to-service request (docs/signed-requests.md) becomes a Caller here, or 401.
 * Checked in this order, so garbage costs no database lookup: the headers' shape, `created`
 * within the window of our clock, the credential named by `keyid` and its expiry, the body
 * against Content-Digest, the HMAC, and last that this exact signature was not accepted before.
 */
export const SIGNATURE_WINDOW_SECONDS = 300;

export interface SignedRequest {
  method: string;
  /** The URIs the client may have signed: as received, and under PUBLIC_URL when set. */
  targetUris: string[];
  headers: Headers;
  body: Uint8Array;
}

const refused = (why: string) => errors.unauthorized(`Signed request refused: ${why}`);

export async function authenticateSigned(deps: Deps, replay: ReplayStore, request: SignedRequest): Promise<Caller> {
  const parsed = parseSignedHeaders(request.headers);
  if (!parsed.ok) throw refused(parsed.problem);
  const { params } = parsed;
  const nowMs = deps.clock.now().getTime();
  const skew = nowMs / 1000 - params.created;
  if (Math.abs(skew) > SIGNATURE_WINDOW_SECONDS) {
    throw refused(`created is ${Math.floor(Math.abs(skew))} s ${skew > 0 ? "in the past" : "in the future"}; it must be within ${SIGNATURE_WINDOW_SECONDS} s of the service's clock`);
  }
  const credential = await credentialByKeyId(deps, params.keyid);
  const base = (uri: string) => signatureBase({ method: request.method, targetUri: uri, contentDigest: request.headers.get("content-digest")! }, parsed.serializedParams);
  const verified = credential !== null && request.targetUris.some((uri) => sameSignature(hmac(credential.secret, base(uri)), parsed.signature));
  // Whether the keyid exists is never told: an unknown keyid and a wrong HMAC get one answer.
  // Only a signature that verifies (over the Content-Digest header) hears that the body does not
  // match that digest, which only a holder of the secret, or of a signed request it made, gets.
  if (!credential || !verified) throw refused("the signature does not verify (unknown keyid, or not made with its secret over this method, URI and digest)");
  if (!digestMatches(parsed.digests, request.body)) throw refused("the body does not match Content-Digest");
  if (credential.expiresAt.getTime() <= nowMs) throw refused("the service credential has expired");
  let first: boolean;
  try {
    const id = createHash("sha256").update(parsed.signature).digest("hex");
    first = await replay.firstUse(id, nowMs, 2 * SIGNATURE_WINDOW_SECONDS * 1000);
  } catch {
    // Unlike the rate limit, this check does not fail open: a replay would be accepted.
    throw new AppError("unavailable", "The replay check is unavailable; retry shortly");
  }
  if (!first) throw refused("this signature was used before (send a new nonce and created for every request)");
  return {
    orgId: credential.orgId,
    userId: credential.userId,
    apiKeyId: null,
    serviceCredentialId: credential.id,
    scopes: new Set(credential.scopes as Scope[]),
    bucketId: credential.bucketId,
    principal: `svc:${credential.id}`,
  };
}
