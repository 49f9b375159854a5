import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ImportConfig } from "../domain/core/config.ts";
import type { FetchedFile, FetchFailure, FetchFailureCode, FetchOptions, UrlFetcher } from "../domain/ports/url-fetcher.ts";
import { openOutbound, OutboundRefused, type OutboundStream, type Resolver } from "../net/outbound.ts";

const failure = (code: FetchFailureCode, message: string): FetchFailure => Object.assign(new Error(message), { name: "FetchFailure", code });

const header = (h: OutboundStream["headers"], name: string): string | null => {
  const v = h[name];
  return Array.isArray(v) ? (v[0] ?? null) : (v ?? null);
};

/**
 * media_import's fetcher over net/outbound.ts: every hop's URL is checked, and every address
 * it resolves to is checked when the connection is made, so neither a redirect nor a DNS
 * answer can lead the worker to a loopback, private, link-local, unique-local or metadata
 * address. Redirects are followed up to the limit; the body is written to a temporary file as
 * it arrives, and the fetch stops at the size limit, the deadline, or when the body comes in
 * slower than the rate floor (a server that trickles would otherwise hold a job slot until the
 * deadline).
 */
export function urlFetcher(config: Pick<ImportConfig, "allowPrivate">, resolve?: Resolver): UrlFetcher {
  const policy = { allowPrivate: config.allowPrivate, allowedHosts: null };
  return {
    async fetch(url: string, opts: FetchOptions): Promise<FetchedFile> {
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(failure("timeout", `No complete answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
      let received = 0;
      const floor = opts.minRate && opts.minRate.bytes > 0 ? watchRate(opts.minRate, () => received, (err) => deadline.abort(err)) : null;
      const progress = { ...opts, onProgress: (bytes: number) => ((received = bytes), opts.onProgress(bytes)) };
      const dir = await mkdtemp(join(tmpdir(), "media-import-"));
      const path = join(dir, "body");
      const discard = () => rm(dir, { recursive: true, force: true });
      try {
        let current = url;
        let answer: OutboundStream;
        for (let hop = 0; ; hop++) {
          answer = await open(current, policy, deadline.signal, resolve);
          const location = header(answer.headers, "location");
          if (answer.status < 300 || answer.status >= 400 || !location) break;
          answer.body.destroy();
          if (hop >= opts.maxRedirects) throw failure("redirects", `More than ${opts.maxRedirects} redirects`);
          current = new URL(location, current).toString();
        }
        if (answer.status !== 200) {
          answer.body.destroy();
          throw failure("status", `The URL answered HTTP ${answer.status}`);
        }
        const lengthHeader = header(answer.headers, "content-length");
        const contentLength = lengthHeader !== null && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : null;
        if (contentLength !== null && contentLength > opts.maxBytes) {
          answer.body.destroy();
          throw failure("too_large", `The file is ${contentLength} bytes; imports are limited to ${opts.maxBytes}`);
        }
        const contentType = header(answer.headers, "content-type")?.split(";")[0]!.trim().toLowerCase() || null;
        try {
          await opts.onHeaders({ contentType, contentLength });
        } catch (err) {
          answer.body.destroy();
          throw err;
        }
        const size = await save(answer, path, progress, deadline.signal);
        return { size, contentType, blob: () => Bun.file(path), discard };
      } catch (err) {
        await discard();
        throw deadline.signal.aborted ? deadline.signal.reason : err;
      } finally {
        clearTimeout(timer);
        if (floor) clearInterval(floor);
      }
    },
  };
}

/**
 * Checks, ten times a window, that at least `bytes` arrived in the last `windowMs`; from the
 * start of the fetch, so a server that sends no answer at all is stopped as well.
 */
function watchRate(rate: { bytes: number; windowMs: number }, received: () => number, stop: (err: Error) => void): ReturnType<typeof setInterval> {
  const STEPS = 10;
  const seen: number[] = [0];
  const timer = setInterval(
    () => {
      seen.push(received());
      // Ten steps after the first sample, the first and the last span one window.
      if (seen.length <= STEPS) return;
      const inWindow = seen[seen.length - 1]! - seen.shift()!;
      if (inWindow >= rate.bytes) return;
      clearInterval(timer);
      stop(failure("timeout", `Fewer than ${rate.bytes} bytes arrived in ${rate.windowMs / 1000} s: the transfer was too slow and was stopped`));
    },
    Math.max(10, rate.windowMs / STEPS),
  );
  timer.unref?.();
  return timer;
}

async function open(url: string, policy: { allowPrivate: boolean; allowedHosts: null }, signal: AbortSignal, resolve?: Resolver): Promise<OutboundStream> {
  try {
    return await openOutbound(url, { headers: { accept: "*/*", "user-agent": "media-storage-import" }, policy, signal, ...(resolve ? { resolve } : {}) });
  } catch (err) {
    if (err instanceof OutboundRefused) throw failure("refused", err.message);
    if (signal.aborted) throw signal.reason;
    throw failure("network", `The URL could not be fetched: ${(err as Error).message}`);
  }
}

/** Writes the body to `path`, refusing more than maxBytes; resolves with the size. */
function save(answer: OutboundStream, path: string, opts: FetchOptions, signal: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(path);
    let size = 0;
    let done = false;
    const stop = (err: Error) => {
      if (done) return;
      done = true;
      answer.body.destroy();
      out.destroy();
      reject(err);
    };
    // The file's own failures (a full disk; or, after a stop, its directory removed before the
    // file had opened) must reach this promise or nothing: unhandled, an 'error' event ends the process.
    out.on("error", (err) => stop(err));
    signal.addEventListener("abort", () => stop(signal.reason as Error), { once: true });
    answer.body.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > opts.maxBytes) return stop(failure("too_large", `The file is larger than ${opts.maxBytes} bytes, the limit of imports`));
      opts.onProgress(size);
      if (!out.write(chunk)) {
        answer.body.pause();
        out.once("drain", () => answer.body.resume());
      }
    });
    answer.body.on("error", (err) => stop(signal.aborted ? (signal.reason as Error) : failure("network", `The transfer broke off: ${err.message}`)));
    answer.body.on("end", () => {
      if (done) return;
      out.end(() => {
        done = true;
        resolve(size);
      });
    });
  });
}
