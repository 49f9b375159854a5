/**
 * The long-lived child process of worker/derivatives/render-pool.ts, started at the lower CPU
 * priority WORKER_NICE gives it: decodes and encodes pictures for the process that started it,
 * so libvips' threads (and FFmpeg's, and pdf.js) run after the service's own work. Two kinds of
 * request over Bun's IPC channel (structured clone: bytes travel as they are):
 *   - `transform`: an on-the-fly render (sharpTransformer);
 *   - `derive`: an object's thumbnail and facts, by the renderer of its kind (renderers.ts), from
 *     the bytes sent, or from the store's file of the version (`ctx.stored`), read here.
 * Every request gets one reply with its id: the result, or the error's class and message.
 */
import type { MediaKind } from "../../domain/media/kind.ts";
import type { ImageTransform, TransformedImage } from "../../domain/ports/images.ts";
import type { RenderContext, Rendered } from "./kinds.ts";
import { lowerOwnAutogroup } from "./nice-command.ts";
import { RENDERERS } from "./renderers.ts";
import { renderSource } from "./source.ts";
import { sharpTransformer } from "./transform.ts";

lowerOwnAutogroup();

export type HostRequest =
  | { id: number; type: "transform"; source: Uint8Array; transform: ImageTransform; limits: { maxPixels: number } }
  | { id: number; type: "derive"; kind: MediaKind; ctx: RenderContext };

export type HostReply =
  | { id: number; ok: true; transformed?: TransformedImage; rendered?: Rendered }
  | { id: number; ok: false; error: string; errorName: string };

const asBuffer = (b: Uint8Array | undefined) => (b ? Buffer.from(b.buffer, b.byteOffset, b.byteLength) : undefined);

async function handle(m: HostRequest): Promise<HostReply> {
  if (m.type === "transform") return { id: m.id, ok: true, transformed: await sharpTransformer.transform(asBuffer(m.source)!, m.transform, m.limits) };
  const renderer = RENDERERS[m.kind];
  if (!renderer) throw new Error(`no renderer for ${m.kind}`);
  const bytes = asBuffer(m.ctx.bytes);
  return { id: m.id, ok: true, rendered: await renderSource(renderer, { ...m.ctx, ...(bytes ? { bytes } : {}) }) };
}

process.on("message", async (m: HostRequest) => {
  const reply = await handle(m).catch(
    (err): HostReply => ({ id: m.id, ok: false, error: err instanceof Error ? err.message : String(err), errorName: err instanceof Error ? err.name : "Error" }),
  );
  process.send!(reply);
});
// The service went away (or closed the channel): nothing is left to render for.
process.on("disconnect", () => process.exit(0));
