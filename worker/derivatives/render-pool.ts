import { join } from "node:path";
import type { ImageTransform, TransformedImage } from "../../domain/ports/images.ts";
import { MediaError } from "./errors.ts";
import type { RenderReply, RenderRequest } from "./render-host.ts";

const HOST = join(import.meta.dir, "render-host.ts");
const NICE = Bun.which("nice");

type Pending = { resolve: (t: TransformedImage) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> };

/**
 * On-the-fly renders made in one long-lived child process at niceness `nice` (render-host.ts).
 * A 24-megapixel render keeps libvips busy on every core for half a second; in the server
 * process it competed at equal priority with every other organization's requests (bench
 * neighbours: another organization's p99 went to 4-5x its quiet value). In the child, the
 * scheduler serves the event loop, PostgreSQL and the storage node first. The process is
 * started on the first render, not at boot, and started again if it dies: the renders it held
 * fail with an Error (the caller's 422 thumbnail_unavailable), later ones go to the new child.
 * Bytes cross the IPC channel as they are (structured clone), a copy each way; for a render
 * that is small against the decode.
 */
export class NicedRenderer {
  private child: ReturnType<typeof Bun.spawn> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly nice: number,
    /** Longest a render may take before it is given up (the child is then restarted). */
    private readonly timeoutMs: number,
  ) {}

  transform(source: Buffer, transform: ImageTransform, limits: { maxPixels: number }): Promise<TransformedImage> {
    if (this.closed) return Promise.reject(new Error("the renderer is closed"));
    const child = this.host();
    const id = this.nextId++;
    return new Promise<TransformedImage>((resolve, reject) => {
      const timer = setTimeout(() => {
        // A render that hangs holds libvips' threads: the child goes, and everything it held with it.
        this.restart(new MediaError(`The render took longer than ${Math.round(this.timeoutMs / 1000)} s`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      const message: RenderRequest = { id, source, transform, limits };
      child.send(message);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.restart(new Error("the renderer is closed"));
  }

  private host(): ReturnType<typeof Bun.spawn> {
    if (this.child) return this.child;
    const cmd = NICE && this.nice > 0 ? [NICE, "-n", String(this.nice), process.execPath, HOST] : [process.execPath, HOST];
    const child = Bun.spawn(cmd, {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "inherit",
      serialization: "advanced",
      ipc: (reply: RenderReply) => this.settle(reply),
    });
    child.exited.then(() => {
      if (this.child === child) this.restart(new Error("the rendering process ended unexpectedly"));
    });
    // A server that is otherwise done should not stay up for an idle renderer.
    child.unref();
    this.child = child;
    return child;
  }

  private settle(reply: RenderReply): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    clearTimeout(p.timer);
    if (reply.ok) p.resolve({ bytes: Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength), width: reply.width, height: reply.height, contentType: reply.contentType });
    else p.reject(new MediaError(reply.error));
  }

  /** Fails every render the child holds and lets it go; the next render starts a new one. */
  private restart(reason: Error): void {
    const child = this.child;
    this.child = null;
    child?.kill();
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(reason);
      this.pending.delete(id);
    }
  }
}
