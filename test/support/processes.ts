import { join } from "node:path";
import { WAIT_CEILING_MS } from "./eventually.ts";

const root = join(import.meta.dir, "../..");

export interface Child {
  proc: ReturnType<typeof Bun.spawn>;
  /** Resolves with the first stdout line matching, or rejects after the timeout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  output(): string;
  errors(): string;
  /** Resolves with the exit code once the process has exited and both its streams are read to the end. */
  finished(): Promise<number>;
}

/**
 * How long a test waits for a freshly spawned service to answer: a first start on the embedded
 * defaults (PGlite's first migration, the storage node, the console's bundle) takes about 15 s
 * on an idle 2-core machine and was seen taking 46 s under load 18; a ceiling, not a budget.
 */
export const START_CEILING_MS = 150_000;

/**
 * Picture work at normal priority, for every server and worker a test starts: in the idle class
 * (the default) a machine busy with other work gives the render child no CPU, and thumbnails,
 * renders, set renditions and a job held over SIGTERM missed every wait (load 7-17). The
 * scheduling itself is tested on its own (niced-host for the idle class, bullmq-worker's first
 * test for WORKER_NICE).
 */
export const TEST_PICTURE_PRIORITY = { WORKER_NICE: "0", WORKER_SCHED_IDLE: "false" } as const;

/** Runs a repository script under Bun with a minimal environment plus `env`, reading its output as it comes. */
export function spawnScript(script: string, env: Record<string, string>, prefix: string[] = []): Child {
  const proc = Bun.spawn([...prefix, process.execPath, script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "warn", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  let err = "";
  const listeners = new Set<() => void>();
  const reading = Promise.all([
    (async () => {
      for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
        out += new TextDecoder().decode(chunk);
        for (const l of listeners) l();
      }
    })(),
    (async () => {
      for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) err += new TextDecoder().decode(chunk);
    })(),
  ]);
  return {
    proc,
    output: () => out,
    errors: () => err,
    finished: async () => {
      const code = await proc.exited;
      await reading;
      return code;
    },
    waitFor(pattern, timeoutMs = WAIT_CEILING_MS) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(pattern);
          if (m) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${pattern} in output:\n${out}\nstderr:\n${err}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
  };
}

export async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

/**
 * Waits until `url` answers 2xx, as a started service's /healthz does. When the process exits
 * first it fails at once with its exit code and output; past `timeoutMs` it says what it waited
 * for and shows the output so far, rather than leaving the next request to fail with a bare
 * ECONNREFUSED.
 */
export async function untilServing(child: Child, url: string, opts: { what?: string; timeoutMs?: number } = {}): Promise<void> {
  const what = opts.what ?? `${url} to answer`;
  const timeoutMs = opts.timeoutMs ?? START_CEILING_MS;
  const started = Date.now();
  let exited: number | null = null;
  void child.proc.exited.then((code) => (exited = code));
  let last = "nothing yet";
  for (;;) {
    if (exited !== null) {
      await child.finished();
      throw new Error(`waiting for ${what}: the process exited with status ${exited} first\nstdout:\n${child.output()}\nstderr:\n${child.errors()}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(Math.max(1000, timeoutMs - (Date.now() - started))) });
      if (res.ok) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = String(err);
    }
    if (Date.now() - started > timeoutMs) {
      throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what} (last attempt: ${last})\nstdout:\n${child.output()}\nstderr:\n${child.errors()}`);
    }
    await Bun.sleep(200);
  }
}
