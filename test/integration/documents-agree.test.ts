import { describe, expect, test } from "bun:test";
import { eventually } from "../support/eventually.ts";
import { withServerAndOrg } from "../support/fixtures.ts";
import { pdf, png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * Places where the service and its documents used to disagree, each held to what the document
 * now says: SECURITY.md (the storage node's headers, the repeated complete-upload) and
 * docs/conventions.md (405 with the envelope and `Allow`, whatever the method).
 */
let server: TestServer;
let org: TestOrg;
let bucket: { id: string; name: string };

/** Objects whose thumbnails are made in the background: the server stops once they are settled. */
const made: string[] = [];
const put = async (...args: Parameters<typeof upload>) => {
  const o = await upload(...args);
  made.push(o.id);
  return o;
};

withServerAndOrg({
  ready: async (started) => {
    ({ server, org } = started);
    bucket = await newBucket(org, "docs");
  },
  cleanup: async () => {
    for (const id of made) {
      await eventually(async () => ((await org.admin.get(`/api/media/${id}`)).body.thumbnail?.state === "pending" ? undefined : true), { what: `the thumbnail of ${id}`, timeoutMs: 120_000 });
    }
  },
});

describe("SECURITY.md §6: what the embedded storage node serves inline carries a CSP", () => {
  const POLICY = "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'";

  test("a PDF: the policy without sandbox (its viewer would not run), with object-src 'self'; inline when streamed", async () => {
    const doc = await put(org.admin, bucket.id, "papers/a.pdf", pdf(1), { contentType: "application/pdf" });
    const stream = await org.admin.get(`/api/media/${doc.id}/stream`);
    expect(stream.status).toBe(302);
    const download = await org.admin.post("/api/presign/download", { objectId: doc.id });
    for (const [url, inline] of [
      [stream.headers.get("location")!, true],
      [download.body.url, false],
    ] as const) {
      const res = await fetch(url);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/pdf");
      expect(res.headers.get("content-security-policy")).toBe(`${POLICY}; object-src 'self'`);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      if (inline) expect(res.headers.get("content-disposition")).toBeNull();
      else expect(res.headers.get("content-disposition")).toStartWith("attachment");
    }
  });

  test("an image and a text file: the policy with sandbox", async () => {
    for (const [key, bytes, type] of [
      ["pics/a.png", await png(4, 4), "image/png"],
      ["notes/a.txt", "plain words", "text/plain"],
    ] as const) {
      const o = await put(org.admin, bucket.id, key, bytes, { contentType: type });
      const res = await fetch((await org.admin.get(`/api/media/${o.id}/stream`)).headers.get("location")!);
      await res.arrayBuffer();
      expect(res.headers.get("content-security-policy")).toBe(`${POLICY}; sandbox`);
    }
  });
});
