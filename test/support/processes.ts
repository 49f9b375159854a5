import { join } from "node:path";

const root = join(import.meta.dir, "../..");

export interface Child {
  proc: ReturnType<typeof Bun.spawn>;
  /** Resolves with the first stdout line matching, or rejects after the timeout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  output(): string;
  errors(): string;
}

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
  (async () => {
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      out += new TextDecoder().decode(chunk);
      for (const l of listeners) l();
    }
  })();
  (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) err += new TextDecoder().decode(chunk);
  })();
  return {
    proc,
    output: () => out,
    errors: () => err,
    waitFor(pattern, timeoutMs = 20_000) {
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
