import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalS3 } from "../../storage/local-s3/index.ts";

export interface OtherStore {
  port: number;
  /** What points a test server at it (through `endpoint`, when a proxy stands between them). */
  env(endpoint?: string): Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A second embedded storage node standing for any other S3-compatible store: a server reaches it
 * through S3_ENDPOINT, as it would AWS or Ceph, so it signs no maximum into upload URLs and
 * confirm is the only bound on what a PUT stores.
 */
export async function otherStore(): Promise<OtherStore> {
  const dir = mkdtempSync(join(tmpdir(), "media-unbounded-store-"));
  const credentials = { accessKeyId: "OTHERSTORE", secretAccessKey: "other-store-secret" };
  const store = await startLocalS3({ dir, credentials: [credentials] });
  return {
    port: store.port,
    env: (endpoint = store.url) => ({ S3_ENDPOINT: endpoint, S3_ACCESS_KEY_ID: credentials.accessKeyId, S3_SECRET_ACCESS_KEY: credentials.secretAccessKey, S3_FORCE_PATH_STYLE: "true" }),
    stop: async () => {
      await store.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
