import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { S3Storage, type StorageInstrument } from "../storage/s3.ts";
import { startLocalS3 } from "../storage/local-s3/index.ts";
import type { Config } from "./config.ts";
import { listening } from "./listen.ts";
import { Unreachable } from "./start-failure.ts";

export interface OpenedStorage {
  storage: S3Storage;
  /** Where storage listens: the configured endpoint or the embedded node. */
  endpoint: string;
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * The configured S3-compatible store, or (no S3_ENDPOINT) the embedded storage node on
 * 127.0.0.1 with credentials generated once and kept in DATA_DIR. The bucket is ensured either
 * way; the browser uploads' CORS rule is set on the embedded node at every start, and on another
 * store only when its bucket has none (rules of the operator's own are left as they are).
 */
export async function openStorage(config: Config, instrument?: StorageInstrument): Promise<OpenedStorage> {
  const s3 = config.s3;
  if (s3.endpoint) {
    if (!s3.accessKeyId || !s3.secretAccessKey) throw new Error("S3_ENDPOINT is set: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required too");
    const storage = new S3Storage({ ...s3, endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, instrument });
    await storage.ensureBucket(undefined, "if-missing").catch((err) => {
      storage.client.destroy();
      const refused = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 403;
      throw new Unreachable(`the S3 store at ${origin(s3.endpoint!)}`, refused ? "S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY" : "S3_ENDPOINT", err);
    });
    return { storage, endpoint: s3.endpoint, embedded: false, close: async () => storage.client.destroy() };
  }
  const credentials = embeddedCredentials(config.dataDir);
  const node = await listening({ variable: "STORAGE_PORT", what: "the embedded storage node", host: "127.0.0.1", port: s3.embeddedPort }, () =>
    startLocalS3({
      dir: join(config.dataDir, "objects"),
      host: "127.0.0.1",
      port: s3.embeddedPort,
      region: s3.region,
      credentials: [credentials],
    }),
  );
  const storage = new S3Storage({
    endpoint: node.url,
    publicEndpoint: s3.publicEndpoint,
    region: s3.region,
    bucket: s3.bucket,
    forcePathStyle: true,
    timeoutMs: s3.timeoutMs,
    instrument,
    // The node refuses a PUT longer than its URL's signed maximum; other stores are measured at confirm.
    enforcesMaxLength: true,
    ...credentials,
  });
  await storage.ensureBucket();
  return {
    storage,
    endpoint: node.url,
    embedded: true,
    close: async () => {
      storage.client.destroy();
      await node.stop();
    },
  };
}

/** The embedded node's master credential: random on first start, then kept (mode 0600). */
function embeddedCredentials(dataDir: string): { accessKeyId: string; secretAccessKey: string } {
  const file = join(dataDir, "storage-credentials.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
  mkdirSync(dataDir, { recursive: true });
  const creds = { accessKeyId: `LOCAL${randomBytes(8).toString("hex").toUpperCase()}`, secretAccessKey: randomBytes(30).toString("base64url") };
  writeFileSync(file, JSON.stringify(creds), { mode: 0o600 });
  return creds;
}

/** The endpoint without any credentials a URL could carry. */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(an invalid URL)";
  }
}
