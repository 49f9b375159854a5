import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { type InnerList, type Item, parseDictionary, serializeInnerList } from "structured-headers";

/**
 * The part of HTTP Message Signatures (RFC 9421) and Digest Fields (RFC 9530) the service uses
 * for service-to-service calls: one signature labelled `sig1`, algorithm `hmac-sha256`, covering
 * exactly `@method`, `@target-uri` and `content-digest`, with `created`, `keyid` and usually a
 * `nonce`. The same functions sign (clients, tests) and check (domain/access/auth.ts), so both
 * sides build the signature base one way. Structured fields are parsed and written by the
 * `structured-headers` library (RFC 8941); nothing here does I/O.
 */

export const SIGNATURE_LABEL = "sig1";
export const SIGNATURE_ALG = "hmac-sha256";
export const COVERED_COMPONENTS = ["@method", "@target-uri", "content-digest"] as const;

export interface SignatureParams {
  created: number;
  keyid: string;
  alg: string;
  nonce?: string;
}

/** `sha-256=:<base64>:` of the exact body bytes (an empty body has a digest too). */
export function contentDigest(body: Uint8Array): string {
  return `sha-256=:${createHash("sha256").update(body).digest("base64")}:`;
}

/** The `@signature-params` value: the covered components with the parameters, as RFC 8941 writes them. */
export function serializeParams(params: SignatureParams): string {
  const map = new Map<string, string | number>([
    ["created", params.created],
    ["keyid", params.keyid],
    ["alg", params.alg],
  ]);
  if (params.nonce !== undefined) map.set("nonce", params.nonce);
  const list: InnerList = [COVERED_COMPONENTS.map((c): Item => [c, new Map()]), map];
  return serializeInnerList(list);
}

/** RFC 9421 section 2.5: one line per covered component, then `@signature-params`. */
export function signatureBase(request: { method: string; targetUri: string; contentDigest: string }, serializedParams: string): string {
  return [
    `"@method": ${request.method.toUpperCase()}`,
    `"@target-uri": ${request.targetUri}`,
    `"content-digest": ${request.contentDigest}`,
    `"@signature-params": ${serializedParams}`,
  ].join("\n");
}

/** HMAC-SHA256 keyed with the secret's characters (ASCII), as `openssl dgst -hmac` does it. */
export function hmac(secret: string, base: string): Buffer {
  return createHmac("sha256", secret).update(base).digest();
}

/**
 * The three headers a client sends for a signed request: `Content-Digest`, `Signature-Input`
 * and `Signature`. `now` in seconds; a random nonce unless one is given.
 */
export function signRequest(
  request: { method: string; url: string; body?: Uint8Array },
  credential: { keyId: string; secret: string },
  opts: { now?: number; nonce?: string } = {},
): Record<string, string> {
  const digest = contentDigest(request.body ?? new Uint8Array());
  const params = serializeParams({
    created: opts.now ?? Math.floor(Date.now() / 1000),
    keyid: credential.keyId,
    alg: SIGNATURE_ALG,
    nonce: opts.nonce ?? randomBytes(16).toString("hex"),
  });
  const signature = hmac(credential.secret, signatureBase({ method: request.method, targetUri: request.url, contentDigest: digest }, params));
  return {
    "content-digest": digest,
    "signature-input": `${SIGNATURE_LABEL}=${params}`,
    signature: `${SIGNATURE_LABEL}=:${signature.toString("base64")}:`,
  };
}

/** A signed request's headers, parsed and checked for shape; `problem` says what is wrong. */
export type ParsedSignature =
  | { ok: true; params: SignatureParams; serializedParams: string; signature: Buffer; digests: Map<string, Buffer> }
  | { ok: false; problem: string };

export function parseSignedHeaders(headers: Headers): ParsedSignature {
  const inputHeader = headers.get("signature-input");
  const signatureHeader = headers.get("signature");
  if (!inputHeader || !signatureHeader) return { ok: false, problem: "send both Signature-Input and Signature" };
  let inputs: Map<string, Item | InnerList>;
  let signatures: Map<string, Item | InnerList>;
  try {
    inputs = parseDictionary(inputHeader);
    signatures = parseDictionary(signatureHeader);
  } catch {
    return { ok: false, problem: "Signature-Input or Signature is not a structured-field dictionary" };
  }
  if (inputs.size !== 1 || signatures.size !== 1) return { ok: false, problem: `send exactly one signature, labelled ${SIGNATURE_LABEL}` };
  const input = inputs.get(SIGNATURE_LABEL);
  const signature = signatures.get(SIGNATURE_LABEL);
  if (!input || !signature) return { ok: false, problem: `the signature must be labelled ${SIGNATURE_LABEL}` };
  if (!Array.isArray(input[0])) return { ok: false, problem: "Signature-Input must be an inner list of components" };
  if (!(signature[0] instanceof ArrayBuffer)) return { ok: false, problem: "Signature must be a byte sequence (:base64:)" };
  const components = (input[0] as Item[]).map(([name, params]) => (typeof name === "string" && params.size === 0 ? name : null));
  if (components.join(" ") !== COVERED_COMPONENTS.join(" ")) {
    return { ok: false, problem: `the signature must cover exactly ${COVERED_COMPONENTS.map((c) => `"${c}"`).join(" ")}, in that order` };
  }
  const p = input[1];
  const created = p.get("created");
  const keyid = p.get("keyid");
  const alg = p.get("alg");
  const nonce = p.get("nonce");
  if (typeof created !== "number" || !Number.isInteger(created)) return { ok: false, problem: "the created parameter (Unix seconds) is required" };
  if (typeof keyid !== "string" || keyid.length === 0) return { ok: false, problem: "the keyid parameter is required" };
  if (alg !== SIGNATURE_ALG) return { ok: false, problem: `the alg parameter must be "${SIGNATURE_ALG}"` };
  if (nonce !== undefined && (typeof nonce !== "string" || nonce.length > 128)) return { ok: false, problem: "the nonce parameter must be a string of at most 128 characters" };
  for (const name of p.keys()) if (!["created", "keyid", "alg", "nonce"].includes(name)) return { ok: false, problem: `unknown signature parameter ${name}` };
  const digestHeader = headers.get("content-digest");
  if (!digestHeader) return { ok: false, problem: "Content-Digest is required (sha-256 of the body, even an empty one)" };
  const digests = new Map<string, Buffer>();
  try {
    for (const [algorithm, [value]] of parseDictionary(digestHeader)) {
      if (value instanceof ArrayBuffer) digests.set(algorithm, Buffer.from(value));
    }
  } catch {
    return { ok: false, problem: "Content-Digest is not a structured-field dictionary" };
  }
  if (!digests.has("sha-256") && !digests.has("sha-512")) return { ok: false, problem: "Content-Digest must carry sha-256 or sha-512" };
  return {
    ok: true,
    params: { created, keyid, alg, ...(nonce !== undefined ? { nonce: nonce as string } : {}) },
    serializedParams: serializeInnerList(input as InnerList),
    signature: Buffer.from(signature[0]),
    digests,
  };
}

/** Every digest the client sent that we know must match the body; one we know must be there. */
export function digestMatches(digests: Map<string, Buffer>, body: Uint8Array): boolean {
  let checked = 0;
  for (const [algorithm, expected] of digests) {
    const node = algorithm === "sha-256" ? "sha256" : algorithm === "sha-512" ? "sha512" : null;
    if (!node) continue;
    const actual = createHash(node).update(body).digest();
    if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return false;
    checked++;
  }
  return checked > 0;
}

export function sameSignature(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

