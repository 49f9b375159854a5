// Decoder for aws-chunked request bodies ("Content-Encoding: aws-chunked"):
//   <hex-size>[;chunk-signature=<sig>]\r\n<bytes>\r\n ... 0[;chunk-signature=<sig>]\r\n[trailers]\r\n
// Signed variants chain each chunk's signature off the previous one (the seed is
// the request signature), so chunks cannot be reordered, dropped or altered.
// Data is yielded before its chunk signature is checked; callers only publish
// the upload after the whole body has been verified.

import { createHash, type Hash } from "node:crypto";
import { Errors, S3Error } from "./errors.ts";
import { type AuthResult, chunkSignature, EMPTY_SHA256, signaturesEqual, trailerSignature } from "./sigv4.ts";

const MAX_LINE = 8192;

const malformed = (why: string) => Errors.invalidRequest(`Malformed aws-chunked body: ${why}`);
const badSignature = () =>
  new S3Error("SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.", 403);

function findCrlf(buf: Uint8Array, from: number): number {
  for (let i = from; i + 1 < buf.length; i++) if (buf[i] === 13 && buf[i + 1] === 10) return i;
  return -1;
}

export class AwsChunkedDecoder {
  /** Trailing headers (lowercased names), available once decode() has finished. */
  readonly trailers = new Map<string, string>();

  /** auth is set for signed variants; trailer says whether trailing headers follow the last chunk. */
  constructor(
    private readonly auth: AuthResult | undefined,
    private readonly trailer: boolean,
  ) {}

  async *decode(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    let buf: Uint8Array = new Uint8Array(0);
    let state = "size" as "size" | "data" | "data-end" | "trailer" | "final" | "done";
    let remaining = 0;
    let expectedSig = "";
    let previousSig = this.auth?.seedSignature ?? "";
    let chunkHash: Hash | undefined;
    let trailerText = "";
    let trailerSig: string | undefined;

    const verifyChunk = (hashHex: string) => {
      if (!this.auth) return;
      const sig = chunkSignature(this.auth, previousSig, hashHex);
      if (!signaturesEqual(sig, expectedSig)) throw badSignature();
      previousSig = sig;
    };

    for await (const incoming of source) {
      if (buf.length === 0) buf = incoming;
      else {
        const joined = new Uint8Array(buf.length + incoming.length);
        joined.set(buf);
        joined.set(incoming, buf.length);
        buf = joined;
      }
      let pos = 0;
      scan: while (pos < buf.length) {
        switch (state) {
          case "size": {
            const nl = findCrlf(buf, pos);
            if (nl < 0) {
              if (buf.length - pos > MAX_LINE) throw malformed("chunk header too long");
              break scan;
            }
            const line = Buffer.from(buf.buffer, buf.byteOffset + pos, nl - pos).toString("latin1");
            pos = nl + 2;
            const [sizeHex = "", ...ext] = line.split(";");
            if (!/^[0-9a-fA-F]{1,15}$/.test(sizeHex.trim())) throw malformed("bad chunk size");
            remaining = parseInt(sizeHex.trim(), 16);
            if (this.auth) {
              const sig = ext.map((e) => e.trim()).find((e) => e.startsWith("chunk-signature="));
              if (!sig) throw malformed("missing chunk-signature");
              expectedSig = sig.slice("chunk-signature=".length);
              chunkHash = createHash("sha256");
            }
            if (remaining === 0) {
              verifyChunk(EMPTY_SHA256);
              state = this.trailer ? "trailer" : "final";
            } else state = "data";
            break;
          }
          case "data": {
            const n = Math.min(remaining, buf.length - pos);
            const piece = buf.subarray(pos, pos + n);
            pos += n;
            remaining -= n;
            chunkHash?.update(piece);
            yield piece;
            if (remaining === 0) state = "data-end";
            break;
          }
          case "data-end": {
            if (buf.length - pos < 2) break scan;
            if (buf[pos] !== 13 || buf[pos + 1] !== 10) throw malformed("chunk not terminated by CRLF");
            pos += 2;
            if (chunkHash) verifyChunk(chunkHash.digest("hex"));
            state = "size";
            break;
          }
          case "trailer": {
            const nl = findCrlf(buf, pos);
            if (nl < 0) {
              if (buf.length - pos > MAX_LINE) throw malformed("trailer line too long");
              break scan;
            }
            const line = Buffer.from(buf.buffer, buf.byteOffset + pos, nl - pos).toString("latin1");
            pos = nl + 2;
            if (line === "") {
              if (this.auth) {
                if (trailerSig === undefined) throw malformed("missing x-amz-trailer-signature");
                const sig = trailerSignature(this.auth, previousSig, createHash("sha256").update(trailerText).digest("hex"));
                if (!signaturesEqual(sig, trailerSig)) throw badSignature();
              }
              state = "done";
              break;
            }
            const colon = line.indexOf(":");
            if (colon <= 0) throw malformed("bad trailer line");
            const name = line.slice(0, colon).trim().toLowerCase();
            const value = line.slice(colon + 1).trim();
            if (name === "x-amz-trailer-signature") trailerSig = value;
            else {
              this.trailers.set(name, value);
              trailerText += `${name}:${value}\n`;
            }
            break;
          }
          case "final": {
            if (buf.length - pos < 2) break scan;
            if (buf[pos] !== 13 || buf[pos + 1] !== 10) throw malformed("missing final CRLF");
            pos += 2;
            state = "done";
            break;
          }
          case "done":
            throw malformed("data after the final chunk");
        }
      }
      buf = buf.subarray(pos);
    }
    // Some encoders end the stream right after the last chunk's header; accept that
    // only when there can be nothing else to read (no trailer expected).
    if (state === "final" && buf.length === 0) state = "done";
    if (state === "trailer" && !this.auth && buf.length === 0) state = "done";
    if (state !== "done") throw Errors.incompleteBody();
  }
}
