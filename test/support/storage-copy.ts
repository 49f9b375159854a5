import { S3Storage } from "../../storage/s3.ts";

/** A client of one S3-compatible store, for tests that copy or wipe a whole bucket. */
export function s3Client(endpoint: string, credentials: { accessKeyId: string; secretAccessKey: string }, bucket = "media"): S3Storage {
  return new S3Storage({ endpoint, publicEndpoint: null, region: "us-east-1", bucket, forcePathStyle: true, ...credentials });
}

/**
 * What `rclone sync` or `aws s3 sync` does, over the S3 API: every object of `from` is copied to
 * `to` (content type kept), and whatever `to` holds beyond that is deleted. Returns the count copied.
 */
export async function syncBucket(from: S3Storage, to: S3Storage): Promise<number> {
  const seen = new Set<string>();
  let copied = 0;
  for await (const page of from.list("")) {
    for (const o of page) {
      seen.add(o.key);
      const got = await from.get(o.key);
      if (!got) continue;
      await to.put(o.key, new Uint8Array(await new Response(got.body).arrayBuffer()), { contentType: got.info.contentType ?? "application/octet-stream" });
      copied++;
    }
  }
  for await (const page of to.list("")) for (const o of page) if (!seen.has(o.key)) await to.delete(o.key);
  return copied;
}

export async function wipeBucket(store: S3Storage): Promise<void> {
  await store.deletePrefix("");
}
