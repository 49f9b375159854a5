import { GetObjectTaggingCommand } from "@aws-sdk/client-s3";
import type { S3Storage } from "../../storage/s3.ts";

/**
 * What the service asks of an S3-compatible store, each as one check run through the storage
 * adapter the service uses (storage/s3.ts) and plain HTTP for what clients do with presigned
 * URLs. Run against the embedded node and a real implementation (test/compat/run.ts), the two
 * columns say where they differ.
 */
export interface CheckResult {
  name: string;
  ok: boolean;
  /** What was observed, for the record (statuses, headers, error codes). */
  observed: string;
}

interface Context {
  storage: S3Storage;
  /** Keys of this run go under it, so runs never meet. */
  prefix: string;
}

const MiB = 1024 * 1024;
const now = () => new Date();

function bytes(n: number, seed = 1): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

async function tagsOf(storage: S3Storage, key: string): Promise<Record<string, string>> {
  const out = await storage.client.send(new GetObjectTaggingCommand({ Bucket: bucketOf(storage), Key: key }));
  return Object.fromEntries((out.TagSet ?? []).map((t) => [t.Key!, t.Value!]));
}

function bucketOf(storage: S3Storage): string {
  return (storage as unknown as { opts: { bucket: string } }).opts.bucket;
}

/** The S3 error code of a failed answer (`<Code>...</Code>`), or its status. */
async function failure(res: Response): Promise<string> {
  const text = await res.text();
  return `${res.status} ${/<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? ""}`.trim();
}

type Check = (ctx: Context) => Promise<{ ok: boolean; observed: string }>;

const checks: Record<string, Check> = {
  "presigned PUT with its signed headers (Content-Type, x-amz-tagging), then tags read back": async ({ storage, prefix }) => {
    const key = `${prefix}/single/photo.jpg`;
    const put = storage.presignPut(key, { contentType: "image/jpeg", tagging: "summer&beach%20day", expiresIn: 300, now: now() });
    const res = await fetch(put.url, { method: "PUT", headers: put.headers, body: bytes(1000) });
    if (!res.ok) return { ok: false, observed: `PUT ${await failure(res)}` };
    const head = await storage.head(key);
    const tags = await tagsOf(storage, key);
    const ok = head?.size === 1000 && head.contentType === "image/jpeg" && "summer" in tags && "beach day" in tags;
    return { ok, observed: `PUT ${res.status}; HEAD ${head?.size} bytes ${head?.contentType}; tags ${JSON.stringify(tags)}` };
  },
  "presigned PUT refuses a Content-Type other than the signed one": async ({ storage, prefix }) => {
    const put = storage.presignPut(`${prefix}/single/wrong-type.jpg`, { contentType: "image/jpeg", expiresIn: 300, now: now() });
    const res = await fetch(put.url, { method: "PUT", headers: { "Content-Type": "text/html" }, body: bytes(10) });
    return { ok: res.status === 403, observed: await failure(res) };
  },
  "presigned PUT refuses a missing x-amz-tagging it was signed with": async ({ storage, prefix }) => {
    const put = storage.presignPut(`${prefix}/single/no-tags.jpg`, { contentType: "image/jpeg", tagging: "a", expiresIn: 300, now: now() });
    const res = await fetch(put.url, { method: "PUT", headers: { "Content-Type": "image/jpeg" }, body: bytes(10) });
    return { ok: res.status === 403, observed: await failure(res) };
  },
  "presigned PUT with a maximum: a shorter body is stored; a longer one is refused where the adapter signs the maximum": async ({ storage, prefix }) => {
    const key = `${prefix}/single/bounded.bin`;
    const put = storage.presignPut(key, { contentType: "application/octet-stream", maxLength: 100, expiresIn: 300, now: now() });
    const longer = await fetch(put.url, { method: "PUT", headers: put.headers, body: bytes(5000) });
    const longerSeen = await failure(longer);
    const afterLonger = await storage.head(key);
    const shorter = await fetch(put.url, { method: "PUT", headers: put.headers, body: bytes(60) });
    await shorter.arrayBuffer();
    const head = await storage.head(key);
    // Unenforced, the longer body is stored: the service measures it at confirm.
    const longerOk = storage.enforcesMaxLength ? longerSeen === "400 EntityTooLarge" && afterLonger === null : longer.ok && afterLonger?.size === 5000;
    return {
      ok: longerOk && shorter.ok && head?.size === 60,
      observed: `maximum ${storage.enforcesMaxLength ? "signed" : "not signed"}; 5000 bytes: ${longerSeen}, HEAD ${afterLonger?.size ?? "none"}; 60 bytes: ${shorter.status}, HEAD ${head?.size}`,
    };
  },
  "presigned PUT with If-None-Match: * works once; If-Match binds to the ETag": async ({ storage, prefix }) => {
    const key = `${prefix}/single/once.bin`;
    const put = storage.presignPut(key, { contentType: "application/octet-stream", condition: { ifNoneMatch: "*" }, expiresIn: 300, now: now() });
    const first = await fetch(put.url, { method: "PUT", headers: put.headers, body: bytes(69) });
    await first.arrayBuffer();
    const second = await fetch(put.url, { method: "PUT", headers: put.headers, body: bytes(3000) });
    const secondSeen = await failure(second);
    const etag = (await storage.head(key))?.etag ?? "";
    const replace = storage.presignPut(key, { contentType: "application/octet-stream", condition: { ifMatch: etag }, expiresIn: 300, now: now() });
    const third = await fetch(replace.url, { method: "PUT", headers: replace.headers, body: bytes(70, 2) });
    await third.arrayBuffer();
    const fourth = await fetch(replace.url, { method: "PUT", headers: replace.headers, body: bytes(71, 3) });
    const fourthSeen = await failure(fourth);
    const head = await storage.head(key);
    const ok = first.ok && second.status === 412 && third.ok && fourth.status === 412 && head?.size === 70;
    return { ok, observed: `first ${first.status}; again ${secondSeen}; If-Match ${third.status}; again ${fourthSeen}; HEAD ${head?.size}` };
  },
  "an expired presigned URL is refused": async ({ storage, prefix }) => {
    const put = storage.presignPut(`${prefix}/single/late.jpg`, { contentType: "image/jpeg", expiresIn: 60, now: new Date(Date.now() - 120_000) });
    const res = await fetch(put.url, { method: "PUT", headers: put.headers, body: bytes(10) });
    return { ok: res.status === 403, observed: await failure(res) };
  },
  "multipart: create, presigned part PUTs, ListParts, complete": async ({ storage, prefix }) => {
    const key = `${prefix}/multi/film.mov`;
    const uploadId = await storage.createMultipart(key, { contentType: "video/quicktime", tagging: "clip" });
    const sizes = [5 * MiB, 1234];
    const etags: string[] = [];
    for (const [i, size] of sizes.entries()) {
      const part = storage.presignUploadPart(key, { uploadId, partNumber: i + 1, expiresIn: 300, now: now() });
      const res = await fetch(part.url, { method: "PUT", headers: part.headers, body: bytes(size, i) });
      if (!res.ok) return { ok: false, observed: `part ${i + 1}: ${await failure(res)}` };
      etags.push(res.headers.get("etag") ?? "");
    }
    const listed = await storage.listParts(key, uploadId);
    const listedOk = listed.length === 2 && listed.every((p, i) => p.partNumber === i + 1 && p.etag === etags[i] && p.size === sizes[i]);
    await storage.completeMultipart(key, uploadId, listed);
    const head = await storage.head(key);
    const tags = await tagsOf(storage, key);
    // Tags given at creation are not required to survive completion (Ceph 16 drops them): the
    // service tags the completed object itself (putTags, the next check), so they are only recorded.
    const ok = listedOk && head?.size === sizes[0]! + sizes[1]! && head.contentType === "video/quicktime";
    return { ok, observed: `ListParts ${JSON.stringify(listed.map((p) => [p.partNumber, p.size]))} (ETags as PUT answered: ${listedOk}); ${head?.size} bytes, ETag ${head?.etag}; tags given at creation, after completion: ${JSON.stringify(tags)}` };
  },
  "multipart: abort, after which the upload is gone": async ({ storage, prefix }) => {
    const key = `${prefix}/multi/abandoned.bin`;
    const uploadId = await storage.createMultipart(key, { contentType: "application/octet-stream" });
    const part = storage.presignUploadPart(key, { uploadId, partNumber: 1, expiresIn: 300, now: now() });
    await (await fetch(part.url, { method: "PUT", headers: part.headers, body: bytes(100) })).text();
    await storage.abortMultipart(key, uploadId);
    let after = "listed";
    try {
      await storage.listParts(key, uploadId);
    } catch (err) {
      after = `${(err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode} ${(err as Error).name}`;
    }
    // Aborting twice is harmless (the sweeper may race a client).
    await storage.abortMultipart(key, uploadId);
    return { ok: after.startsWith("404"), observed: `ListParts after abort: ${after}; second abort: no error` };
  },
  "CORS: the bucket rule the service sets answers a browser's preflight and exposes ETag": async ({ storage, prefix }) => {
    await storage.ensureBucket(["https://console.example"]);
    const key = `${prefix}/cors/pic.png`;
    const put = storage.presignPut(key, { contentType: "image/png", tagging: "x", expiresIn: 300, now: now() });
    const preflight = await fetch(put.url, {
      method: "OPTIONS",
      headers: { Origin: "https://console.example", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "content-type,x-amz-tagging" },
    });
    const allowOrigin = preflight.headers.get("access-control-allow-origin");
    const allowMethods = preflight.headers.get("access-control-allow-methods") ?? "";
    const stranger = await fetch(put.url, { method: "OPTIONS", headers: { Origin: "https://elsewhere.example", "Access-Control-Request-Method": "PUT" } });
    const res = await fetch(put.url, { method: "PUT", headers: { ...put.headers, Origin: "https://console.example" }, body: bytes(10) });
    const expose = (res.headers.get("access-control-expose-headers") ?? "").toLowerCase();
    await storage.ensureBucket();
    const ok = preflight.status === 200 && allowOrigin === "https://console.example" && allowMethods.includes("PUT") && !stranger.headers.get("access-control-allow-origin") && expose.includes("etag");
    return {
      ok,
      observed: `preflight ${preflight.status} allow-origin ${allowOrigin} methods ${allowMethods}; other origin ${stranger.status} allow-origin ${stranger.headers.get("access-control-allow-origin")}; PUT exposes ${expose}`,
    };
  },
  "ranged GET on a presigned URL, and the download name": async ({ storage, prefix }) => {
    const key = `${prefix}/range/data.bin`;
    const body = bytes(4096, 7);
    await storage.put(key, body, { contentType: "application/octet-stream" });
    const url = storage.presignGet(key, { expiresIn: 300, downloadName: "résumé 2026.bin", now: now() });
    const res = await fetch(url, { headers: { Range: "bytes=100-199" } });
    const got = new Uint8Array(await res.arrayBuffer());
    const disposition = res.headers.get("content-disposition");
    const ok = res.status === 206 && res.headers.get("content-range") === "bytes 100-199/4096" && got.length === 100 && got[0] === body[100] && !!disposition?.includes("attachment");
    return { ok, observed: `${res.status} ${res.headers.get("content-range")}; disposition ${disposition}` };
  },
  "listing in UTF-8 byte order, with prefixes (reconcile merges on it)": async ({ storage, prefix }) => {
    const keys = ["a", "b/1", "b/2", "z", "é", "\u{1F600}", "\uFFFD"].map((k) => `${prefix}/list/${k}`);
    for (const key of keys) await storage.put(key, bytes(1), { contentType: "application/octet-stream" });
    const listed: string[] = [];
    for await (const page of storage.list(`${prefix}/list/`)) listed.push(...page.map((o) => o.key));
    const prefixes: string[] = [];
    for await (const page of storage.listPrefixes(`${prefix}/list/`)) prefixes.push(...page);
    const byBytes = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const ok = JSON.stringify(listed) === JSON.stringify(byBytes) && prefixes.includes(`${prefix}/list/b/`);
    return { ok, observed: `${listed.map((k) => k.slice(prefix.length + 6)).join(" ")}; prefixes ${prefixes.map((k) => k.slice(prefix.length + 6)).join(" ")}` };
  },
  "tags put on an existing object (how a completed multipart upload gets its tags)": async ({ storage, prefix }) => {
    const key = `${prefix}/tags/obj`;
    await storage.put(key, bytes(5), { contentType: "text/plain" });
    await storage.putTags(key, "one&two%2Fthree");
    const tags = await tagsOf(storage, key);
    return { ok: "one" in tags && "two/three" in tags, observed: JSON.stringify(tags) };
  },
  "delete, delete of a missing key, and delete by prefix": async ({ storage, prefix }) => {
    await storage.put(`${prefix}/del/a`, bytes(3), { contentType: "text/plain" });
    await storage.put(`${prefix}/del/sub/b`, bytes(3), { contentType: "text/plain" });
    await storage.delete(`${prefix}/del/a`);
    await storage.delete(`${prefix}/del/never-there`);
    const gone = (await storage.head(`${prefix}/del/a`)) === null;
    const removed = await storage.deletePrefix(`${prefix}/del/`);
    return { ok: gone && removed === 1 && (await storage.head(`${prefix}/del/sub/b`)) === null, observed: `deleted: ${gone}; by prefix: ${removed}` };
  },
};

export async function runChecks(storage: S3Storage): Promise<CheckResult[]> {
  const prefix = `compat-${Date.now()}`;
  const results: CheckResult[] = [];
  for (const [name, check] of Object.entries(checks)) {
    try {
      results.push({ name, ...(await check({ storage, prefix })) });
    } catch (err) {
      results.push({ name, ok: false, observed: `threw ${(err as Error).name}: ${(err as Error).message}` });
    }
  }
  await storage.deletePrefix(`${prefix}/`);
  return results;
}
