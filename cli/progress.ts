import { humanBytes } from "./output.ts";

export interface ProgressSink {
  /** Bytes moved (negative to take back the bytes of a failed attempt). */
  add(bytes: number): void;
  /** Bytes that need no transfer (parts a resumed upload already has): not counted as speed. */
  skip(bytes: number): void;
  /** Replaces the label shown after the bar (current file). */
  label(text: string): void;
  fileDone(): void;
  /** Prints a line on stderr above the bar. */
  note(text: string): void;
  /** Runs `write` (output on stdout) with the bar cleared, then redraws it. */
  around(write: () => void): void;
  finish(): void;
}

/** For quiet runs and pipes: notes still go to stderr, nothing else does. */
export function silentProgress(write: ((s: string) => void) | null = null): ProgressSink {
  return { add() {}, skip() {}, label() {}, fileDone() {}, note: (t) => write?.(`${t}\n`), around: (w) => w(), finish() {} };
}

/**
 * One bar for the whole transfer on stderr: percentage, bytes, throughput (over the last
 * few seconds) and time left; redrawn at most ten times a second.
 */
export function progressBar(opts: { total: number; files: number; write: (s: string) => void; columns: () => number; verb: string }): ProgressSink {
  const started = performance.now();
  let done = 0;
  let skipped = 0;
  let filesDone = 0;
  let label = "";
  let lastDraw = 0;
  const samples: [number, number][] = [[started, 0]];

  const rate = (now: number) => {
    while (samples.length > 2 && now - samples[0]![0] > 3000) samples.shift();
    const [t0, b0] = samples[0]!;
    const dt = (now - t0) / 1000;
    return dt > 0.2 ? (done - b0) / dt : 0;
  };

  const draw = (force = false) => {
    const now = performance.now();
    if (!force && now - lastDraw < 100) return;
    lastDraw = now;
    samples.push([now, done]);
    const speed = rate(now);
    const pct = opts.total > 0 ? Math.min(1, done / opts.total) : 1;
    const eta = speed > 0 ? (opts.total - done) / speed : Number.NaN;
    const files = opts.files > 1 ? ` ${filesDone}/${opts.files} files` : "";
    const stats = ` ${(pct * 100).toFixed(0).padStart(3)}% ${humanBytes(done)}/${humanBytes(opts.total)} ${humanBytes(speed)}/s${Number.isFinite(eta) && pct < 1 ? ` ETA ${duration(eta)}` : ""}${files} `;
    const cols = Math.max(40, opts.columns());
    const barWidth = Math.max(10, Math.min(30, cols - stats.length - 20));
    const filled = Math.round(pct * barWidth);
    const bar = `[${"#".repeat(filled)}${"-".repeat(barWidth - filled)}]`;
    const room = cols - bar.length - stats.length - 1;
    const name = room > 3 ? (label.length > room ? `…${label.slice(label.length - room + 1)}` : label) : "";
    opts.write(`\r${bar}${stats}${name}\x1b[K`);
  };

  return {
    add(bytes) {
      done += bytes;
      draw();
    },
    skip(bytes) {
      done += bytes;
      skipped += bytes;
      for (const s of samples) s[1] += bytes;
      draw();
    },
    label(text) {
      label = text;
      draw();
    },
    fileDone() {
      filesDone++;
      draw();
    },
    note(text) {
      opts.write(`\r\x1b[K${text}\n`);
      draw(true);
    },
    around(write) {
      opts.write("\r\x1b[K");
      write();
      draw(true);
    },
    finish() {
      const secs = (performance.now() - started) / 1000;
      const moved = done - skipped;
      const reused = skipped > 0 ? `, ${humanBytes(skipped)} already uploaded` : "";
      opts.write(`\r\x1b[K${opts.verb} ${humanBytes(moved)} in ${duration(secs)} (${humanBytes(secs > 0 ? moved / secs : moved)}/s${reused})\n`);
    },
  };
}

export function duration(secs: number): string {
  if (secs < 10) return `${secs.toFixed(1)}s`;
  if (secs < 60) return `${Math.round(secs)}s`;
  const m = Math.floor(secs / 60);
  const s = Math.round(secs % 60);
  return m < 60 ? `${m}m${String(s).padStart(2, "0")}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}
