import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { MediaError } from "./errors.ts";

/** ffmpeg and poppler, from WORKER_TOOLS_DIR when set, else from PATH; null when absent. */
export function findExecutable(name: string, toolsDir: string | null): string | null {
  if (toolsDir) {
    const path = join(toolsDir, name);
    return existsSync(path) ? path : null;
  }
  return Bun.which(name);
}

export interface RunOptions {
  timeoutMs: number;
  /** Output beyond this is a failure (a tool gone wild), not a memory problem. */
  maxStdoutBytes?: number;
  /** Replaced in error messages (the temporary directory), so a reason never shows worker paths. */
  redact?: string;
}

/**
 * Runs an external tool with a hard time limit (SIGKILL: a stuck decoder gets no say) and
 * bounded output. A non-zero exit becomes a MediaError carrying the tool's last error line,
 * which is nearly always about the file ("Invalid data found when processing input").
 */
export async function runTool(path: string, args: string[], opts: RunOptions): Promise<Buffer> {
  const tool = basename(path);
  const proc = Bun.spawn([path, ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, opts.timeoutMs);
  try {
    const max = opts.maxStdoutBytes ?? 16 * 1024 * 1024;
    const [stdout, stderr] = await Promise.all([readBounded(proc.stdout, max, () => proc.kill("SIGKILL")), new Response(proc.stderr).text()]);
    const code = await proc.exited;
    if (timedOut) throw new MediaError(`${tool} did not finish within ${Math.round(opts.timeoutMs / 1000)} s and was stopped`);
    if (stdout === null) throw new MediaError(`${tool} produced more than ${max} bytes of output and was stopped`);
    if (code !== 0) {
      const lines = stderr.split("\n").map((l) => l.trim()).filter(Boolean);
      let last = lines.at(-1) ?? `exit code ${code}`;
      if (opts.redact) last = last.replaceAll(opts.redact, "").replace(/^[/\\]+/, "");
      throw new MediaError(`${tool} could not read the file: ${last.slice(0, 300)}`);
    }
    return stdout;
  } finally {
    clearTimeout(timer);
  }
}

async function readBounded(stream: ReadableStream<Uint8Array>, max: number, overflow: () => void): Promise<Buffer | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.byteLength;
    if (size > max) {
      overflow();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
