// Shared setup for the local-s3 integration tests: a real server on a random
// port over a temp dir, an AWS SDK v3 client for it, and an independent SigV4
// signer (@smithy/signature-v4) for hand-built requests.

import { createHash, createHmac } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client, type S3ClientConfig } from "@aws-sdk/client-s3";
import { SignatureV4 } from "@smithy/signature-v4";
import { type LocalS3, type LocalS3Options, startLocalS3 } from "../../storage/local-s3/index.ts";

export const CREDS = { accessKeyId: "AKIALOCALS3TEST", secretAccessKey: "local/s3+secret=key" };
export const REGION = "us-east-1";

export interface TestServer {
  s3: LocalS3;
  /** Parent temp dir; the data dir is `${root}/data`. */
  root: string;
  dataDir: string;
  client: S3Client;
  cleanup(): Promise<void>;
}

export function makeClient(url: string, extra: Partial<S3ClientConfig> = {}): S3Client {
  return new S3Client({ endpoint: url, forcePathStyle: true, region: REGION, credentials: CREDS, ...extra });
}

export async function startTestServer(extra: Partial<LocalS3Options> = {}): Promise<TestServer> {
  const root = await mkdtemp(join(tmpdir(), "local-s3-test-"));
  const dataDir = join(root, "data");
  const s3 = await startLocalS3({ dir: dataDir, port: 0, region: REGION, credentials: [CREDS], ...extra });
  const client = makeClient(s3.url);
  return {
    s3,
    root,
    dataDir,
    client,
    cleanup: async () => {
      client.destroy();
      await s3.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

type Data = string | ArrayBuffer | ArrayBufferView;
const toBytes = (d: Data) =>
  typeof d === "string" ? Buffer.from(d) : d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);

class Sha256 {
  private h;
  constructor(secret?: Data) {
    this.h = secret === undefined ? createHash("sha256") : createHmac("sha256", toBytes(secret));
  }
  update(d: Data) {
    this.h.update(toBytes(d));
  }
  async digest() {
    return new Uint8Array(this.h.digest());
  }
}

export function signer(region = REGION, credentials = CREDS): SignatureV4 {
  return new SignatureV4({ service: "s3", region, credentials, sha256: Sha256, uriEscapePath: false, applyChecksum: false });
}

export const sha256Hex = (d: string | Uint8Array) => createHash("sha256").update(d).digest("hex");
export const md5Hex = (d: string | Uint8Array) => createHash("md5").update(d).digest("hex");
export const md5Base64 = (d: string | Uint8Array) => createHash("md5").update(d).digest("base64");

/** RFC 3986 encoding as S3 clients do it, "/" kept. */
export const encodeKey = (key: string) =>
  key
    .split("/")
    .map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase()))
    .join("/");

export interface RawRequest {
  method: string;
  /** Already-encoded path, e.g. "/bucket/my%20key". */
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  /** Defaults to the body's SHA-256. */
  payloadHash?: string;
  signingDate?: Date;
  region?: string;
  credentials?: typeof CREDS;
}

/** Build a SigV4 header-signed request with the independent signer and send it with fetch. */
export async function signedFetch(baseUrl: string, r: RawRequest): Promise<Response> {
  const u = new URL(baseUrl);
  const body = typeof r.body === "string" ? new TextEncoder().encode(r.body) : r.body;
  const headers: Record<string, string> = {
    host: u.host,
    "x-amz-content-sha256": r.payloadHash ?? sha256Hex(body ?? new Uint8Array()),
    ...(body ? { "content-length": String(body.length) } : {}),
    ...r.headers,
  };
  const signed = await signer(r.region, r.credentials).sign(
    { method: r.method, protocol: "http:", hostname: u.hostname, port: Number(u.port), path: r.path, query: r.query ?? {}, headers, body },
    { signingDate: r.signingDate ?? new Date() },
  );
  const qs = Object.entries(r.query ?? {})
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
  return fetch(`${baseUrl}${r.path}${qs ? `?${qs}` : ""}`, { method: r.method, headers: signed.headers, body: body as BodyInit | undefined });
}

/** Parse <Code> and <Message> out of an S3 error document. */
export async function s3Error(res: Response): Promise<{ status: number; code?: string; message?: string; body: string }> {
  const body = await res.text();
  return {
    status: res.status,
    code: /<Code>([^<]*)<\/Code>/.exec(body)?.[1],
    message: /<Message>([^<]*)<\/Message>/.exec(body)?.[1],
    body,
  };
}

export async function streamToBuffer(body: { transformToByteArray(): Promise<Uint8Array> } | undefined): Promise<Buffer> {
  return Buffer.from(await body!.transformToByteArray());
}

/** Deterministic pseudo-random bytes (fast, so multi-MiB fixtures are cheap). */
export function bytes(n: number, seed = 1): Buffer {
  const b = Buffer.allocUnsafe(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}
