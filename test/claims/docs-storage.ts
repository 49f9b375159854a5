import { expect } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { PageClaims } from "./claim.ts";
import { defaults, org } from "../support/claim-checks.ts";
import { root } from "../support/doc-examples.ts";
import { newBucket } from "../support/objects.ts";
import { upload } from "../support/upload.ts";

const compat = "test/compat/s3-checks.ts";

const claims: PageClaims = {
  page: "docs/storage.md",
  claims: [
    {
      says: "Bytes live in one S3 bucket (`S3_BUCKET`, `media` by default)",
      check: defaults({ S3_BUCKET: "media" }),
    },
    {
      says: "kept in `DATA_DIR/storage-credentials.json` (mode 0600)",
      check: async (server) => {
        const file = join(server.config.dataDir, "storage-credentials.json");
        expect((statSync(file).mode & 0o777).toString(8)).toBe("600");
      },
    },
    {
      says: "(`.ci/run` installs `radosgw`, `ceph-mon` and `ceph-osd`); `COMPAT_S3_ENDPOINT`, `COMPAT_S3_ACCESS_KEY_ID` and `COMPAT_S3_SECRET_ACCESS_KEY` point it at any other store",
      check: async () => {
        // What CI installs and what the compat run reads: the page names them for a reader who runs it elsewhere.
        expect(readFileSync(join(root, ".ci/run"), "utf8")).toContain("radosgw ceph-mon ceph-osd");
        const run = readFileSync(join(root, "test/compat/run.ts"), "utf8");
        for (const v of ["COMPAT_S3_ENDPOINT", "COMPAT_S3_ACCESS_KEY_ID", "COMPAT_S3_SECRET_ACCESS_KEY"]) expect(run).toContain(`process.env.${v}`);
      },
    },
    {
      says: "| presigned PUT with its signed headers (`Content-Type`, `x-amz-tagging`), tags read back | pass | pass |",
      by: { file: compat, test: "presigned PUT with its signed headers (Content-Type, x-amz-tagging), then tags read back" },
    },
    {
      says: "| presigned PUT with another `Content-Type`, or without the signed tagging header | 403 `SignatureDoesNotMatch` | 403 `SignatureDoesNotMatch` |",
      by: { file: compat, test: "presigned PUT refuses a Content-Type other than the signed one" },
    },
    {
      says: "| presigned PUT shorter than the URL's maximum (a declared `size` is an upper bound) | pass | pass¹ |",
      by: { file: compat, test: "presigned PUT with a maximum: a shorter body is stored; a longer one is refused where the adapter signs the maximum" },
    },
    {
      says: "| presigned PUT longer than the URL's maximum | 400 `EntityTooLarge`, nothing stored (the maximum is signed) | stored¹: no maximum is signed, confirm measures it |",
      by: { file: compat, test: "presigned PUT with a maximum: a shorter body is stored; a longer one is refused where the adapter signs the maximum" },
    },
    {
      says: "(against a second embedded node reached through `S3_ENDPOINT`, which signs no maximum either, they pass)",
      by: { file: "test/integration/upload-size-bound.test.ts", test: "a body above the declared size is stored, and confirm counts it when it fits the allocation" },
    },
    {
      says: "Its URLs carry a signed maximum (`max-content-length`: the declared size, else `UPLOAD_UNSIZED_MAX_BYTES`) that it refuses a longer body past (`400 EntityTooLarge`).",
      by: { file: "test/integration/upload-size-bound.test.ts", test: "without a size the URL is still bounded, by UPLOAD_UNSIZED_MAX_BYTES (64 MiB by default)" },
    },
    {
      says: "else it is refused (403 `quota_exceeded`) and deleted",
      by: { file: "test/integration/upload-size-bound.test.ts", test: "a body above the declared size that does not fit the allocation is refused at confirm (403) and deleted" },
    },
    {
      says: "| presigned PUT with `If-None-Match: *` a second time; with `If-Match: <etag>` once the ETag changed | 412 `PreconditionFailed` | 412 `PreconditionFailed` |",
      by: { file: compat, test: "presigned PUT with If-None-Match: * works once; If-Match binds to the ETag" },
    },
    {
      says: "| expired presigned URL | 403 `AccessDenied` | 403 `AccessDenied` |",
      by: { file: compat, test: "an expired presigned URL is refused" },
    },
    {
      says: "| multipart: abort, then ListParts | 404 `NoSuchUpload` | 404 `NoSuchKey` |",
      by: { file: compat, test: "multipart: abort, after which the upload is gone" },
    },
    {
      says: "| ranged GET (206, `Content-Range`) and the download name (`response-content-disposition`) | pass | pass |",
      by: { file: compat, test: "ranged GET on a presigned URL, and the download name" },
    },
    {
      says: "| listing in UTF-8 byte order, with common prefixes (reconcile merges on it) | pass | pass |",
      by: { file: compat, test: "listing in UTF-8 byte order, with prefixes (reconcile merges on it)" },
    },
    {
      says: "| the service: an upload URL works once, a replacement signed `If-Match` works, an unsized upload over the quota is refused at confirm and its bytes deleted |",
      by: { file: "test/compat/service-flow.ts", test: "service: an upload URL works once; a replacement (If-Match) and an unsized upload over the quota" },
    },
    {
      says: "**`If-Match` on a PUT is compared with the bare ETag**: a quoted `\"<etag>\"` is a 412 on Ceph. The service signs the ETag unquoted, which S3 and the embedded node accept as well.",
      check: async (server) => {
        const o = await org(server);
        const bucket = await newBucket(o);
        await upload(o.admin, bucket.id, "etag.txt", "first", { contentType: "text/plain" });
        const again = await o.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "etag.txt", contentType: "text/plain" });
        const ifMatch = again.body.headers["If-Match"] as string;
        expect(ifMatch).toMatch(/^[^"]+$/);
        const put = await fetch(again.body.url, { method: "PUT", headers: again.body.headers, body: "second" });
        expect(put.status).toBe(200);
      },
    },
    {
      says: "every object answer carries `X-Content-Type-Options: nosniff` and a `Content-Security-Policy` that allows no script (a sandbox for every type but PDF, whose viewer cannot run in one)",
      by: { file: "test/integration/documents-agree.test.ts", test: "a PDF: the policy without sandbox (its viewer would not run), with object-src 'self'; inline when streamed" },
    },
    {
      says: "active types (HTML, SVG, XML, JavaScript, ...) are attachments",
      by: { file: "test/hardening/attack-run-a.test.ts", test: "an HTML object is served as an attachment with nosniff and a sandbox CSP; images stay inline" },
    },
    {
      says: "a presigned PUT stores only the representation headers its URL signed",
      by: { file: "test/hardening/attack-run-a.test.ts", test: "unsigned representation headers on a PUT are neither stored nor replayed" },
    },
  ],
  notPromises: [
    {
      says: "¹ These two rows replaced \"a signed `Content-Length` and another length\" (403 on both) when a declared size stopped being an exact length; against Ceph they were not yet rerun",
      why: "the history of the table and what was not rerun against Ceph: the rows themselves are backed by the compat checks named above",
    },
    {
      says: "in about 16 seconds; the whole run takes about 30",
      why: "how long `npm run compat` took on the test machine, a measurement",
    },
  ],
};

export default claims;
