// Request body intake: undoes aws-chunked framing and verifies everything the
// client asserted about the payload (x-amz-content-sha256, decoded length,
// flexible checksums) while the bytes stream through. Nothing is buffered.

import { createHash } from "node:crypto";
import { AwsChunkedDecoder } from "./chunked.ts";
import { CHECKSUM_LABELS, createChecksum } from "./checksum.ts";
import { type Ctx, MAX_LENGTH_PARAM, MAX_PUT_SIZE, type S3Request } from "./context.ts";
import { Errors, S3Error } from "./errors.ts";
import { type AuthResult, STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER } from "./sigv4.ts";

function checksumHeader(headers: Headers): { name: string; value: string } | undefined {
  const found: { name: string; value: string }[] = [];
  for (const name of Object.keys(CHECKSUM_LABELS)) {
    const value = headers.get(`x-amz-checksum-${name}`);
    if (value !== null) found.push({ name, value });
  }
  if (found.length > 1) throw Errors.invalidRequest("Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.");
  return found[0];
}

/** Validates a Content-MD5 header up front and returns it as hex (undefined when absent). */
export function expectedMd5(headers: Headers): string | undefined {
  const v = headers.get("content-md5");
  if (v === null) return undefined;
  const raw = Buffer.from(v.trim(), "base64");
  if (raw.length !== 16 || raw.toString("base64") !== v.trim())
    throw new S3Error("InvalidDigest", "The Content-MD5 you specified was not valid.", 400);
  return raw.toString("hex");
}

/** The most bytes a PUT's body may hold: S3's single-PUT limit, or less when the request signed a maximum. */
export function bodyLimit(ctx: Ctx): number {
  const signed = ctx.query.get(MAX_LENGTH_PARAM);
  if (signed === undefined) return MAX_PUT_SIZE;
  if (!/^\d{1,16}$/.test(signed)) throw Errors.invalidArgument("The maximum length must be a whole number of bytes", MAX_LENGTH_PARAM, signed);
  return Math.min(Number(signed), MAX_PUT_SIZE);
}

export class Payload {
  size = 0;
  private readonly mode: string;
  private readonly declaredLength: number | undefined;

  constructor(
    private readonly req: S3Request,
    private readonly auth: AuthResult,
    private readonly maxBytes: number,
  ) {
    this.mode = auth.payloadHash;
    const streaming = this.mode.startsWith("STREAMING-");
    const lengthHeader = req.headers.get(streaming ? "x-amz-decoded-content-length" : "content-length");
    if (lengthHeader !== null) {
      if (!/^\d+$/.test(lengthHeader.trim())) throw Errors.invalidArgument("Invalid content length", streaming ? "x-amz-decoded-content-length" : "Content-Length", lengthHeader);
      this.declaredLength = Number(lengthHeader.trim());
      if (this.declaredLength > maxBytes) throw Errors.entityTooLarge(maxBytes);
    }
  }

  /** The decoded, verified body. Throws (at the end at the latest) if any assertion fails. */
  async *chunks(): AsyncGenerator<Uint8Array> {
    const { mode, auth, req } = this;
    let decoder: AwsChunkedDecoder | undefined;
    let source: AsyncIterable<Uint8Array> = req.body;
    if (mode === STREAMING_SIGNED || mode === STREAMING_SIGNED_TRAILER || mode === STREAMING_UNSIGNED_TRAILER) {
      decoder = new AwsChunkedDecoder(mode === STREAMING_UNSIGNED_TRAILER ? undefined : auth, mode !== STREAMING_SIGNED);
      source = decoder.decode(source);
    }

    const headerChecksum = checksumHeader(req.headers);
    const trailerName = req.headers.get("x-amz-trailer")?.trim().toLowerCase();
    const checksumName = headerChecksum?.name ?? (trailerName?.startsWith("x-amz-checksum-") ? trailerName.slice(15) : undefined);
    const checksum = checksumName === undefined ? undefined : createChecksum(checksumName);
    const sha256 = /^[0-9a-f]{64}$/.test(mode) ? createHash("sha256") : undefined;

    for await (const chunk of source) {
      this.size += chunk.length;
      if (this.size > this.maxBytes) throw Errors.entityTooLarge(this.maxBytes);
      sha256?.update(chunk);
      checksum?.update(chunk);
      yield chunk;
    }

    if (this.declaredLength !== undefined && this.size !== this.declaredLength) throw Errors.incompleteBody();
    if (sha256) {
      const computed = sha256.digest("hex");
      if (computed !== mode)
        throw new S3Error("XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.", 400, {
          ClientComputedContentSHA256: mode,
          S3ComputedContentSHA256: computed,
        });
    }
    if (checksumName !== undefined) {
      const expected = headerChecksum?.value ?? decoder?.trailers.get(`x-amz-checksum-${checksumName}`);
      if (expected === undefined) throw Errors.invalidRequest(`The x-amz-checksum-${checksumName} trailer was declared but not sent.`);
      if (checksum && checksum.digestBase64() !== expected.trim())
        throw Errors.badDigest(`The ${CHECKSUM_LABELS[checksumName]} you specified did not match the calculated checksum.`);
    }
  }

  /** Small bodies (XML documents): read fully, verifying Content-MD5 when sent. */
  async readAll(): Promise<Buffer> {
    const md5 = expectedMd5(this.req.headers);
    const parts: Uint8Array[] = [];
    for await (const c of this.chunks()) parts.push(c.slice());
    const body = Buffer.concat(parts);
    if (md5 !== undefined && createHash("md5").update(body).digest("hex") !== md5) throw Errors.badDigest();
    return body;
  }
}
