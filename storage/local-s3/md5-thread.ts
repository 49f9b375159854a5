// MD5 of upload bodies on a thread of its own. Every single-part PUT is hashed for its ETag
// (what S3 clients compare with the MD5 of what they sent), at 600-700 MiB/s: a third of the
// storage node's main-thread time per upload. On the main thread that time is taken from every
// other request of the process (the API shares it when the node is embedded), and beside other
// busy processes a process with one busy thread gets less of the machine than one whose work is
// spread over several. Measured in bench/notes/2026-11-30-uploads-thread.md.

export interface Md5 {
  update(chunk: Uint8Array): void;
  /** The hex digest of every chunk given; ends the hash. */
  digest(): Promise<string>;
  /** Ends the hash without a digest (the body failed). */
  discard(): void;
}

/** Bun's Worker: `unref` lets the process exit while the thread idles. */
type Thread = Worker & { ref(): void; unref(): void };

let thread: Thread | null = null;
let nextId = 1;
const waiting = new Map<number, { resolve(hex: string): void; reject(err: Error): void }>();

function started(): Thread {
  if (thread) return thread;
  const w = new Worker(new URL("./md5-worker.ts", import.meta.url)) as Thread;
  w.onmessage = (event: MessageEvent<{ id: number; hex: string }>) => {
    const entry = waiting.get(event.data.id);
    waiting.delete(event.data.id);
    entry?.resolve(event.data.hex);
    if (waiting.size === 0) w.unref();
  };
  w.onerror = (event) => {
    // A thread that failed takes its hashes with it: each upload waiting on one fails (and is
    // answered 500, its temp file removed); the next upload starts a new thread.
    const err = new Error(`the MD5 thread failed: ${event.message}`);
    for (const entry of waiting.values()) entry.reject(err);
    waiting.clear();
    if (thread === w) thread = null;
    w.terminate();
  };
  thread = w;
  return w;
}

/** An MD5 computed on the hashing thread; chunks are copied to it, so the caller may reuse them. */
export function md5OnThread(): Md5 {
  const w = started();
  const id = nextId++;
  w.ref();
  let done: Promise<string> | null = null;
  const result = new Promise<string>((resolve, reject) => waiting.set(id, { resolve, reject }));
  // An upload that fails before its digest is asked still ends its hash on the thread.
  result.catch(() => {});
  return {
    update(chunk) {
      // A copy of the view alone (a Buffer's slice() would share, and the transfer detach, its pool).
      const copy = new Uint8Array(chunk);
      w.postMessage({ id, chunk: copy }, [copy.buffer]);
    },
    digest() {
      if (!done) {
        w.postMessage({ id, end: true });
        done = result;
      }
      return done;
    },
    discard() {
      void this.digest();
    },
  };
}
