import { join } from "node:path";
import type { MediaKind } from "../../domain/media/kind.ts";
import type { ImageTransform, TransformedImage } from "../../domain/ports/images.ts";
import { nicedCommand, type Priority } from "./nice-command.ts";
import { MediaError, Unsupported } from "./errors.ts";
import type { RenderContext, Rendered } from "./kinds.ts";
import type { HostReply, HostRequest } from "./render-host.ts";

const HOST = join(import.meta.dir, "render-host.ts");

type Pending = { resolve: (r: HostReply & { ok: true }) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> };
type Request = HostRequest extends infer R ? (R extends HostRequest ? Omit<R, "id"> : never) : never;

const asBuffer = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/**
 * Picture work in one long-lived child process at niceness `nice` (render-host.ts): on-the-fly
 * renders and the worker's thumbnails. A 24-megapixel render or a 10-megapixel thumbnail keeps
 * libvips busy on every core for a fraction of a second; in the service's own process that work
 * competed at equal priority with every other organization's requests (bench neighbours: another
 * organization's p99 went to 4-9x its quiet value). In the child, the scheduler serves the event
 * loop, PostgreSQL and the storage node first.
 *
 * The child starts on the first request, not at boot, and again after it dies: the requests it
 * held fail with a plain Error (a job retries it; a render answers thumbnail_unavailable), later ones go to the new
 * child. A file that crashes the decoder now takes the child down, not the service. A request
 * that outlives `timeoutMs` (the renderers stop their own tools well before) restarts the child.
 * Bytes cross the channel as they are (structured clone), a copy each way: small against a decode.
 */
export class NicedHost {
  private child: ReturnType<typeof Bun.spawn> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(
    private readonly priority: Priority,
    private readonly timeoutMs: number,
  ) {}

  async transform(source: Buffer, transform: ImageTransform, limits: { maxPixels: number }): Promise<TransformedImage> {
    const { transformed } = await this.send({ type: "transform", source, transform, limits });
    return { ...transformed!, bytes: asBuffer(transformed!.bytes) };
  }

  /** The thumbnail and facts of an object of `kind`, by the renderer of that kind. */
  async derive(kind: MediaKind, ctx: RenderContext): Promise<Rendered> {
    const { rendered } = await this.send({ type: "derive", kind, ctx });
    return { ...rendered!, thumbnail: { ...rendered!.thumbnail, bytes: asBuffer(rendered!.thumbnail.bytes) } };
  }

  /** The child's process id while one runs (tests, diagnostics). */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  private send(request: Request): Promise<HostReply & { ok: true }> {
    const child = this.host();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // A request that hangs holds the child's threads: the child goes, and everything it held with it.
      const timer = setTimeout(() => this.restart(new MediaError(`Decoding took longer than ${Math.round(this.timeoutMs / 1000)} s`)), this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      child.send({ ...request, id } as HostRequest);
    });
  }

  private host(): ReturnType<typeof Bun.spawn> {
    if (this.child) return this.child;
    const cmd = nicedCommand(this.priority, [process.execPath, HOST]);
    const child = Bun.spawn(cmd, {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "inherit",
      serialization: "advanced",
      ipc: (reply: HostReply) => this.settle(reply),
    });
    child.exited.then(() => {
      if (this.child === child) this.restart(new Error("the picture process ended unexpectedly"));
    });
    // An idle child must not keep a finished process alive; it exits when its parent does.
    child.unref();
    this.child = child;
    return child;
  }

  private settle(reply: HostReply): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    clearTimeout(p.timer);
    if (reply.ok) p.resolve(reply);
    else p.reject(reply.errorName === "Unsupported" ? new Unsupported(reply.error) : reply.errorName === "MediaError" ? new MediaError(reply.error) : new Error(reply.error));
  }

  /** Fails every request the child holds and lets it go; the next request starts a new one. */
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

/**
 * One host per process and niceness, shared by every server and worker in it (tests start many):
 * a child per server would multiply its memory, and it holds no state of its own.
 */
const hosts = new Map<string, NicedHost>();
export function nicedHost(priority: Priority, toolTimeoutMs: number): NicedHost {
  const key = `${priority.nice}/${priority.idle}`;
  let host = hosts.get(key);
  // The renderers stop a stuck tool at toolTimeoutMs; the child is given up on only well after that.
  if (!host) hosts.set(key, (host = new NicedHost(priority, toolTimeoutMs * 2 + 10_000)));
  return host;
}
