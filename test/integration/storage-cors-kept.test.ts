import { afterAll, beforeAll, expect, test } from "bun:test";
import { CreateBucketCommand, GetBucketCorsCommand, PutBucketCorsCommand, S3Client } from "@aws-sdk/client-s3";
import { otherStore, type OtherStore } from "../support/other-store.ts";
import { startServer } from "../support/server.ts";

// One pass: what the start does to a store's bucket does not depend on the database or Redis.

/**
 * The service sets the CORS rule browser uploads need on a store reached through S3_ENDPOINT
 * only when the bucket has none: an operator's own rules survive every start.
 */
let store: OtherStore;
let client: S3Client;
beforeAll(async () => {
  store = await otherStore();
  const env = store.env();
  client = new S3Client({ endpoint: env.S3_ENDPOINT, region: "us-east-1", forcePathStyle: true, credentials: { accessKeyId: env.S3_ACCESS_KEY_ID!, secretAccessKey: env.S3_SECRET_ACCESS_KEY! } });
});
afterAll(async () => {
  client?.destroy();
  await store?.stop();
});

const rulesOf = async (bucket: string) => (await client.send(new GetBucketCorsCommand({ Bucket: bucket }))).CORSRules;

test("a bucket with the operator's CORS rules keeps them across starts", async () => {
  const operators = [{ AllowedOrigins: ["https://app.example.com"], AllowedMethods: ["GET"], AllowedHeaders: ["authorization"], MaxAgeSeconds: 60 }];
  await client.send(new CreateBucketCommand({ Bucket: "operators" }));
  await client.send(new PutBucketCorsCommand({ Bucket: "operators", CORSConfiguration: { CORSRules: operators } }));
  for (let start = 0; start < 2; start++) {
    const server = await startServer({ env: { ...store.env(), S3_BUCKET: "operators" } });
    await server.stop();
    expect(await rulesOf("operators")).toEqual(operators);
  }
});

test("a bucket without CORS rules gets the service's, which let browsers PUT and read ETag", async () => {
  const server = await startServer({ env: { ...store.env(), S3_BUCKET: "bare" } });
  await server.stop();
  expect(await rulesOf("bare")).toEqual([
    { AllowedOrigins: ["*"], AllowedMethods: ["GET", "PUT", "HEAD"], AllowedHeaders: ["*"], ExposeHeaders: ["ETag", "Content-Length", "Content-Type"], MaxAgeSeconds: 3600 },
  ]);
});
