/**
 * The long-lived child process of worker/derivatives/render-pool.ts: makes on-the-fly renders
 * at the lower CPU priority it was started with (`nice`), so libvips' threads, which it starts,
 * run after the service's own work. Messages over Bun's IPC channel (structured clone, so the
 * bytes travel as they are): in `{ id, source, transform, limits }`, out `{ id, ok, bytes,
 * width, height, contentType }` or `{ id, error }` with a message fit for the user.
 */
import type { ImageTransform } from "../../domain/ports/images.ts";
import { sharpTransformer } from "./transform.ts";

export interface RenderRequest {
  id: number;
  source: Uint8Array;
  transform: ImageTransform;
  limits: { maxPixels: number };
}

export type RenderReply =
  | { id: number; ok: true; bytes: Uint8Array; width: number; height: number; contentType: string }
  | { id: number; ok: false; error: string };

process.on("message", async (m: RenderRequest) => {
  let reply: RenderReply;
  try {
    const made = await sharpTransformer.transform(Buffer.from(m.source.buffer, m.source.byteOffset, m.source.byteLength), m.transform, m.limits);
    reply = { id: m.id, ok: true, bytes: made.bytes, width: made.width, height: made.height, contentType: made.contentType };
  } catch (err) {
    reply = { id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  process.send!(reply);
});
// The service went away (or closed the channel): nothing is left to render for.
process.on("disconnect", () => process.exit(0));
