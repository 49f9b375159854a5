// The body of the MD5 thread (md5-thread.ts): one hash per upload in flight, updated in the order
// the chunks were posted, its hex digest posted back when the upload ends.

import { createHash, type Hash } from "node:crypto";

declare const self: Worker;

const hashes = new Map<number, Hash>();

self.onmessage = (event: MessageEvent<{ id: number; chunk?: Uint8Array; end?: boolean }>) => {
  const { id, chunk, end } = event.data;
  let hash = hashes.get(id);
  if (!hash) hashes.set(id, (hash = createHash("md5")));
  if (chunk) hash.update(chunk);
  if (end) {
    hashes.delete(id);
    self.postMessage({ id, hex: hash.digest("hex") });
  }
};
