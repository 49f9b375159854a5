import { ALGORITHM, amzDate, canonicalQuery, signingKey, UNSIGNED_PAYLOAD, uriEncode } from "./sigv4.ts";

export interface PresignerOptions {
  /** Where clients reach storage, e.g. "https://s3.eu-west-1.amazonaws.com" or "http://127.0.0.1:9000". */
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** true: https://host/bucket/key; false: https://bucket.host/key. */
  forcePathStyle: boolean;
}

export interface PresignInput {
  method: "GET" | "PUT" | "HEAD";
  key: string;
  expiresIn: number;
  /** Extra query parameters that are part of the operation (partNumber, uploadId, response-*). */
  query?: Record<string, string>;
  /** Headers the client must send unchanged; all of them are signed (never hoisted into the query). */
  headers?: Record<string, string>;
  now?: Date;
}

/** What only changes once a second: the date, the credential scope and (once a day) the signing key. */
interface Moment {
  second: number;
  longDate: string;
  scope: string;
  credential: string;
  key: Buffer;
}

/**
 * SigV4 query presigning, written out because the SDK presigner is the slow part of a
 * presign request (bench/sign.ts): the signing key and date strings are derived once and
 * reused, and no middleware stack runs per URL. Its output is checked against the SDK's
 * in test/unit/presigner.test.ts.
 */
export class Presigner {
  private readonly origin: string;
  private readonly host: string;
  private readonly pathPrefix: string;
  private moment: Moment | null = null;

  constructor(private readonly opts: PresignerOptions) {
    const base = new URL(opts.endpoint);
    const basePath = base.pathname.replace(/\/+$/, "");
    this.host = opts.forcePathStyle ? base.host : `${opts.bucket}.${base.host}`;
    this.pathPrefix = opts.forcePathStyle ? `${basePath}/${uriEncode(opts.bucket, false)}` : basePath;
    this.origin = `${base.protocol}//${this.host}`;
  }

  presign(input: PresignInput): string {
    const m = this.at(input.now ?? new Date());
    let headerNames = "host";
    let canonicalHeaders = `host:${this.host}\n`;
    if (input.headers) {
      const entries = Object.entries(input.headers).map(([k, v]) => [k.toLowerCase(), v.trim().replace(/\s+/g, " ")] as const);
      entries.push(["host", this.host]);
      entries.sort(([a], [b]) => (a < b ? -1 : 1));
      headerNames = entries.map(([k]) => k).join(";");
      canonicalHeaders = entries.map(([k, v]) => `${k}:${v}\n`).join("");
    }
    const signed = `X-Amz-Algorithm=${ALGORITHM}&X-Amz-Credential=${m.credential}&X-Amz-Date=${m.longDate}&X-Amz-Expires=${input.expiresIn}&X-Amz-SignedHeaders=${uriEncode(headerNames, false)}`;
    // Operation parameters must be sorted in among ours; most URLs have none and skip the sort.
    const query = input.query
      ? canonicalQuery([
          ...Object.entries(input.query),
          ["X-Amz-Algorithm", ALGORITHM],
          ["X-Amz-Credential", `${this.opts.accessKeyId}/${m.scope}`],
          ["X-Amz-Date", m.longDate],
          ["X-Amz-Expires", String(input.expiresIn)],
          ["X-Amz-SignedHeaders", headerNames],
        ])
      : signed;
    const path = `${this.pathPrefix}/${uriEncode(input.key, true)}`;
    const canonicalRequest = `${input.method}\n${path}\n${query}\n${canonicalHeaders}\n${headerNames}\n${UNSIGNED_PAYLOAD}`;
    const hashed = new Bun.CryptoHasher("sha256").update(canonicalRequest).digest("hex");
    const signature = new Bun.CryptoHasher("sha256", m.key).update(`${ALGORITHM}\n${m.longDate}\n${m.scope}\n${hashed}`).digest("hex");
    return `${this.origin}${path}?${query}&X-Amz-Signature=${signature}`;
  }

  private at(now: Date): Moment {
    const second = Math.floor(now.getTime() / 1000);
    if (this.moment?.second === second) return this.moment;
    const longDate = amzDate(now);
    const shortDate = longDate.slice(0, 8);
    const scope = `${shortDate}/${this.opts.region}/s3/aws4_request`;
    const key =
      this.moment?.longDate.startsWith(shortDate) === true ? this.moment.key : signingKey(this.opts.secretAccessKey, shortDate, this.opts.region, "s3");
    this.moment = { second, longDate, scope, credential: uriEncode(`${this.opts.accessKeyId}/${scope}`, false), key };
    return this.moment;
  }
}
