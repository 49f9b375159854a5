import { eq } from "drizzle-orm";
import { mediaObjects } from "../../db/schema/index.ts";
import { deleteMedia } from "../../domain/media/media.ts";
import { objectPath } from "../../domain/media/storage-keys.ts";
import { recordStoredObject } from "../../domain/media/uploads.ts";
import type { TestOrg, TestServer } from "./server.ts";

export type MediaRow = typeof mediaObjects.$inferSelect;

/**
 * A media object made the way a confirmed upload makes it (bytes in storage, then the
 * confirm core: counters, search row, derivative job), without the HTTP round trips.
 */
export async function insertObject(
  server: TestServer,
  org: Pick<TestOrg, "orgId">,
  bucketId: string,
  opts: { key?: string; contentType?: string; bytes?: Uint8Array } = {},
): Promise<MediaRow> {
  const { deps } = server.services;
  const key = opts.key ?? `objects/${crypto.randomUUID()}.png`;
  await deps.storage.put(objectPath(bucketId, key), opts.bytes ?? new Uint8Array(1024), { contentType: opts.contentType ?? "image/png" });
  const id = await recordStoredObject(deps, org.orgId, bucketId, key);
  const [row] = await deps.db.select().from(mediaObjects).where(eq(mediaObjects.id, id));
  return row!;
}

/** What DELETE /api/media/{id} does: a soft delete (usage, counters and search included). */
export async function softDeleteObject(server: TestServer, objectId: string): Promise<void> {
  const [row] = await server.services.deps.db.select({ orgId: mediaObjects.orgId }).from(mediaObjects).where(eq(mediaObjects.id, objectId));
  const caller = { orgId: row!.orgId, userId: crypto.randomUUID(), apiKeyId: null, scopes: new Set(["admin" as const]), bucketId: null, principal: "test" };
  await deleteMedia(server.services.deps, caller, objectId);
}

/** A bucket created through the API, with a unique name. */
export async function newBucket(org: TestOrg, prefix = "b"): Promise<{ id: string; name: string }> {
  const res = await org.admin.post("/api/buckets", { name: `${prefix}-${crypto.randomUUID().slice(0, 8)}` });
  if (res.status !== 201) throw new Error(`creating a bucket failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
