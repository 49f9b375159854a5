// A large body leaves the page cache once it is durable. On the virtual machines this service is
// measured on, growing the page cache costs far more than writing: a loop writing 20 MiB files
// with an fsync each fell from 1.2 GB/s (7 ms of system time a file) to 230-250 MiB/s (70 ms, in
// the write calls) once a gigabyte had been written, and stayed at 1.2 GB/s when each file's
// pages were dropped after its fsync (bench/notes/2026-11-30-decoding-slots.md, "Uploads"). Small
// bodies stay cached: thumbnails and most photos are read again at once (the worker, the API).

import { dlopen, FFIType } from "bun:ffi";

/** Bodies at least this large are dropped from the page cache after their fsync. */
export const DROP_FROM_CACHE_BYTES = 8 * 1024 * 1024;

/** Linux's POSIX_FADV_DONTNEED. */
const DONTNEED = 4;

type Advise = (fd: number) => void;
let advise: Advise | null | undefined;

function load(): Advise | null {
  if (process.platform !== "linux") return null;
  try {
    const libc = dlopen("libc.so.6", { posix_fadvise: { args: [FFIType.i32, FFIType.i64, FFIType.i64, FFIType.i32], returns: FFIType.i32 } });
    return (fd) => void libc.symbols.posix_fadvise(fd, 0, 0, DONTNEED);
  } catch {
    // No glibc (musl, another system): the pages stay cached, as they would anyway.
    return null;
  }
}

/**
 * Asks the kernel to drop the cached pages of `fd`, an open file whose bytes were just fsynced
 * (clean pages: nothing is lost, a later read comes from the disk). Does nothing where the call is
 * not available.
 */
export function dropFromPageCache(fd: number): void {
  if (advise === undefined) advise = load();
  advise?.(fd);
}
