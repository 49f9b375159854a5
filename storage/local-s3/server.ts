// Entry point: the HTTP listener, request parsing, authentication, error
// rendering and the headers every response carries (x-amz-request-id, CORS).
//
// This uses Bun's node:http server rather than Bun.serve because Bun.serve
// (1) drops a handler-set Content-Length on streamed bodies (oven-sh/bun#10507),
// so GetObject would lose Content-Length; (2) adds Content-Disposition with the
// on-disk file name to Bun.file bodies; (3) resolves "." / ".." path segments
// before the handler sees them, which breaks SigV4 (S3 signs the path as sent)
// and makes such keys unreachable.

import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import type { Ctx, S3Request, S3Response } from "./context.ts";
import { corsResponseHeaders, preflight } from "./cors.ts";
import { Errors, S3Error } from "./errors.ts";
import { Uploads } from "./multipart.ts";
import { route } from "./router.ts";
import { lockDataDir } from "./dir-lock.ts";
import { registerInProcess } from "./in-process.ts";
import { type AuthOptions, authenticate, decodeComponent, parseQuery } from "./sigv4.ts";
import { Store } from "./store.ts";
import { errorXml } from "./xml.ts";

export interface LocalS3Options {
  /** Data directory (created if missing); everything persists across restarts. */
  dir: string;
  /** Default "127.0.0.1": never listens beyond loopback unless asked to. */
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default "us-east-1"; requests signed for another region are rejected like S3 does. */
  region?: string;
  credentials: { accessKeyId: string; secretAccessKey: string }[];
  /** Allowed clock difference for header-signed requests; default 900. */
  maxClockSkewSeconds?: number;
}

export interface LocalS3 {
  url: string;
  port: number;
  stop(): Promise<void>;
}

interface Env {
  store: Store;
  uploads: Uploads;
  auth: AuthOptions;
}

export async function startLocalS3(opts: LocalS3Options): Promise<LocalS3> {
  if (!opts.credentials || opts.credentials.length === 0) throw new Error("local-s3: at least one credential is required");
  const host = opts.host ?? "127.0.0.1";
  const dir = resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  // Before the store opens: its start-up cleanup deletes files another node may be writing.
  const lock = await lockDataDir(dir);
  let server: ReturnType<typeof createServer>;
  let env: Env;
  try {
    const store = await Store.open(dir);
    env = {
      store,
      uploads: await Uploads.load(store),
      auth: {
        region: opts.region ?? "us-east-1",
        secrets: new Map(opts.credentials.map((c) => [c.accessKeyId, c.secretAccessKey])),
        maxClockSkewSeconds: opts.maxClockSkewSeconds ?? 900,
      },
    };
    // requestTimeout 0: a multi-GiB upload may legitimately take longer than Node's 5 minute default.
    server = createServer({ requestTimeout: 0 }, (req, res) => void serve(req, res, env));
    await new Promise<void>((ok, fail) => {
      server.once("error", fail);
      server.listen(opts.port ?? 0, host, () => {
        server.off("error", fail);
        ok();
      });
    });
  } catch (err) {
    await lock.release();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const unregister = registerInProcess(url, { store: env.store, region: env.auth.region, secrets: env.auth.secrets });
  return {
    url,
    port,
    stop: async () => {
      unregister();
      await new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      });
      await lock.release();
    },
  };
}

async function serve(nreq: IncomingMessage, nres: ServerResponse, env: Env): Promise<void> {
  nreq.on("error", () => {}); // client aborts surface as errors from the body iterator instead
  nres.on("error", () => {});
  const headers = new Headers();
  const raw = nreq.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i]!, raw[i + 1]!);
    } catch {
      // a header value fetch's Headers refuses cannot be signed either; drop it
    }
  }
  let target = nreq.url ?? "/";
  if (!target.startsWith("/")) {
    const u = URL.parse(target); // absolute-form request target
    target = u ? u.pathname + u.search : "/";
  }
  const q = target.indexOf("?");
  const req: S3Request = {
    method: nreq.method ?? "GET",
    path: q < 0 ? target : target.slice(0, q),
    rawQuery: q < 0 ? "" : target.slice(q + 1),
    headers,
    body: nreq,
    origin: `http://${headers.get("host") ?? "localhost"}`,
  };
  try {
    await send(nres, await handle(req, env), req.method === "HEAD");
  } catch (e) {
    console.error("local-s3: failed to send response", e);
    nres.destroy();
  }
}

function waitWritable(nres: ServerResponse): Promise<void> {
  return new Promise((ok) => {
    const done = () => {
      nres.off("drain", done);
      nres.off("close", done);
      ok();
    };
    nres.on("drain", done);
    nres.on("close", done);
  });
}

async function send(nres: ServerResponse, r: S3Response, head: boolean): Promise<void> {
  const headers = { ...r.headers };
  const body = typeof r.body === "string" ? Buffer.from(r.body) : r.body;
  if (body instanceof Uint8Array && headers["content-length"] === undefined) headers["content-length"] = String(body.length);
  nres.writeHead(r.status, headers);
  if (body === undefined || body instanceof Uint8Array) {
    nres.end(head ? undefined : body);
    return;
  }
  // Always enter the iterator, even for HEAD or a gone client, so it can close its file.
  try {
    for await (const chunk of body) {
      if (head || nres.destroyed) break;
      if (!nres.write(chunk)) await waitWritable(nres);
    }
  } catch (e) {
    console.error("local-s3: response body failed", e);
    nres.destroy();
    return;
  }
  nres.end();
}

/** Path-style addressing: /<bucket>[/<key...>]; "/bucket/" is the bucket itself. */
function parsePath(path: string): { bucket: string; key: string } {
  const rest = path.slice(1);
  const slash = rest.indexOf("/");
  if (slash < 0) return { bucket: decodeComponent(rest, false), key: "" };
  return { bucket: decodeComponent(rest.slice(0, slash), false), key: decodeComponent(rest.slice(slash + 1), false) };
}

function errorResponse(e: unknown, method: string, resource: string, requestId: string): S3Response {
  let err: S3Error;
  if (e instanceof S3Error) err = e;
  else {
    console.error("local-s3: internal error", e);
    err = new S3Error("InternalError", "We encountered an internal error. Please try again.", 500);
  }
  // HEAD responses carry no body, so S3 reports only the status.
  if (method === "HEAD") return { status: err.status, headers: { ...err.headers } };
  return {
    status: err.status,
    headers: { "content-type": "application/xml", ...err.headers },
    body: errorXml(err.code, err.message, resource, requestId, err.extra),
  };
}

async function handle(req: S3Request, env: Env): Promise<S3Response> {
  const requestId = randomBytes(8).toString("hex").toUpperCase();
  let bucket = "";
  let res: S3Response;
  let resource = req.path;
  try {
    const parsed = parsePath(req.path);
    bucket = parsed.bucket;
    resource = parsed.key ? `/${parsed.bucket}/${parsed.key}` : `/${parsed.bucket}`;
    if (req.method === "OPTIONS") {
      res = { status: 200, headers: { "content-length": "0", ...preflight(env.store.bucket(bucket)?.cors, req.headers) } };
    } else {
      const auth = authenticate(req, env.auth);
      if (!auth) throw Errors.accessDenied();
      const query = new Map<string, string>();
      for (const [k, v] of parseQuery(req.rawQuery)) if (!query.has(k)) query.set(k, v);
      const ctx: Ctx = { req, method: req.method, bucket, key: parsed.key, query, auth, store: env.store, uploads: env.uploads, region: env.auth.region };
      res = await route(ctx);
    }
  } catch (e) {
    res = errorResponse(e, req.method, resource, requestId);
  }
  res.headers["x-amz-request-id"] = requestId;
  res.headers["x-amz-id-2"] = requestId;
  if (req.method !== "OPTIONS" && bucket !== "")
    Object.assign(res.headers, corsResponseHeaders(env.store.bucket(bucket)?.cors, req.headers.get("origin"), req.method));
  return res;
}
