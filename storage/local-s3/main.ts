/**
 * The embedded S3-compatible storage node on its own, for deployments that want it as a
 * separate service (packaging/compose.yaml): `bun storage/local-s3/main.ts`.
 * STORAGE_HOST (default 127.0.0.1), STORAGE_PORT (9000), DATA_DIR (./.data; objects under
 * objects/), S3_REGION (us-east-1), and the one credential clients sign with:
 * S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (required). SIGTERM stops it. One process per data
 * directory: a second start on the same one ends with a line naming the process that holds it.
 */
import { join, resolve } from "node:path";
import { listening } from "../../app/listen.ts";
import { exitIfStartFailure } from "../../app/start-failure.ts";
import { startLocalS3 } from "./index.ts";

const env = process.env;
if (!env.S3_ACCESS_KEY_ID || !env.S3_SECRET_ACCESS_KEY) {
  process.stderr.write("S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required: the credential clients sign their requests with\n");
  process.exit(2);
}
const host = env.STORAGE_HOST || "127.0.0.1";
const port = Number(env.STORAGE_PORT || 9000);
const node = await listening({ variable: "STORAGE_PORT", what: "the storage node", host, port, hostVariable: "STORAGE_HOST" }, () =>
  startLocalS3({
    dir: join(resolve(env.DATA_DIR || "./.data"), "objects"),
    host,
    port,
    region: env.S3_REGION || "us-east-1",
    credentials: [{ accessKeyId: env.S3_ACCESS_KEY_ID!, secretAccessKey: env.S3_SECRET_ACCESS_KEY! }],
  }),
).catch((err) => {
  exitIfStartFailure(err);
  throw err;
});
process.stderr.write(`${JSON.stringify({ t: new Date().toISOString(), level: "info", msg: "storage node started", url: node.url })}\n`);
const stop = async () => {
  await node.stop();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
