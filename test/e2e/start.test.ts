import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seedDataDir } from "../support/pglite-template.ts";
import { freePort, START_CEILING_MS, spawnScript, untilServing } from "../support/processes.ts";

/**
 * `npm start` as a user runs it: a real process on the embedded defaults. The first test starts
 * on an empty data directory (the database made and migrated by the start itself); the others,
 * about what a start does with a new database, begin from a migrated copy (seedDataDir): a
 * migration costs a start seconds of CPU.
 */
const dataDir = mkdtempSync(join(tmpdir(), "media-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** A start, and a stop that drains the requests in flight (well within SHUTDOWN_TIMEOUT_MS' 25 s). */
const STOP_CEILING_MS = 30_000;
/** A test that starts the service `n` times: the waits' own messages come before bun's timeout. */
const forStarts = (n: number) => n * (START_CEILING_MS + STOP_CEILING_MS) + 30_000;

async function start(env: Record<string, string>) {
  const port = await freePort();
  const child = spawnScript("app/main.ts", { DATA_DIR: dataDir, PORT: String(port), STORAGE_PORT: String(await freePort()), LOG_LEVEL: "info", ...env });
  const url = `http://127.0.0.1:${port}`;
  try {
    await untilServing(child, `${url}/healthz`, { what: "npm start to answer /healthz" });
  } catch (err) {
    child.proc.kill("SIGKILL");
    throw err;
  }
  return {
    url,
    proc: child.proc,
    async stop() {
      child.proc.kill("SIGTERM");
      await child.finished();
      return { stdout: child.output(), stderr: child.errors() };
    },
  };
}

/** Starts the entry point with `env`, expecting it to refuse; its exit code and output once it has exited. */
async function refusedStart(env: Record<string, string>) {
  const child = spawnScript("app/main.ts", { LOG_LEVEL: "info", ...env });
  const timer = setTimeout(() => child.proc.kill("SIGKILL"), START_CEILING_MS);
  const code = await child.finished();
  clearTimeout(timer);
  return { code, killed: child.proc.signalCode === "SIGKILL", stdout: child.output(), stderr: child.errors() };
}

/** stderr without the JSON log lines: what a person reads. */
const prose = (stderr: string) => stderr.split("\n").filter((l) => l.trim() && !l.startsWith("{"));

describe("npm start on embedded defaults", () => {
  test("first start creates the Default organization and prints the admin secret once; data survives a restart", async () => {
    const first = await start({});
    const me0 = await fetch(`${first.url}/api/me`);
    expect(me0.status).toBe(401);
    // the docs and MCP endpoint are served on the same port
    expect((await fetch(`${first.url}/api/docs`)).status).toBe(200);
    const out1 = await first.stop();
    const secret = /Secret \(shown once, store it now\): ([0-9a-f]{64})/.exec(out1.stdout)?.[1];
    expect(secret).toBeDefined();
    expect(out1.stderr).toContain("/mcp");

    const second = await start({});
    const auth = { authorization: `Bearer ${secret}` };
    const me = await (await fetch(`${second.url}/api/me`, { headers: auth })).json();
    expect(me.organization.name).toBe("Default");
    expect(me.credential.scopes).toContain("admin");
    const created = await fetch(`${second.url}/api/buckets`, { method: "POST", headers: auth, body: JSON.stringify({ name: "kept" }) });
    expect(created.status).toBe(201);
    const out2 = await second.stop();
    expect(out2.stdout).not.toContain("Secret");

    const third = await start({});
    const list = await (await fetch(`${third.url}/api/buckets`, { headers: auth })).json();
    expect(list.data.map((b: { name: string }) => b.name)).toEqual(["kept"]);
    await third.stop();
  }, forStarts(3));

  test("INITIAL_ADMIN_KEY becomes the admin secret on a fresh data directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "media-start-key-"));
    await seedDataDir(dir);
    const key = "ab".repeat(32);
    const s = await start({ DATA_DIR: dir, INITIAL_ADMIN_KEY: key });
    try {
      const me = await fetch(`${s.url}/api/me`, { headers: { authorization: `Bearer ${key}` } });
      expect(me.status).toBe(200);
    } finally {
      const out = await s.stop();
      expect(out.stdout).not.toContain(key);
      rmSync(dir, { recursive: true, force: true });
    }
  }, forStarts(1));

  test("invalid configuration stops the start with a clear message", async () => {
    const run = await refusedStart({ DATA_DIR: dataDir, INITIAL_ADMIN_KEY: "short" });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("INITIAL_ADMIN_KEY");
  }, forStarts(1));

  // A port already taken ends the start with one line that names the port and the variable
  // that moves it, not Bun's stack trace ending in EADDRINUSE, and the process exits non-zero.
  for (const variable of ["PORT", "STORAGE_PORT"] as const) {
    test(`${variable} in use: one line naming the port and ${variable}, exit status 1`, async () => {
      const held = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
      const dir = mkdtempSync(join(tmpdir(), "media-start-port-"));
      await seedDataDir(dir);
      try {
        const ports = { PORT: String(await freePort()), STORAGE_PORT: String(await freePort()), [variable]: String(held.port) };
        const run = await refusedStart({ DATA_DIR: dir, ...ports });
        expect({ killed: run.killed, code: run.code }).toEqual({ killed: false, code: 1 });
        const lines = prose(run.stderr);
        expect(lines).toHaveLength(1);
        expect(lines[0]).toStartWith(`Cannot start: port ${held.port} (${variable}, `);
        expect(lines[0]).toContain(`set ${variable} to a free port`);
        expect(run.stderr).not.toContain("EADDRINUSE");
        if (variable === "PORT") {
          // The first start's secret was printed and stored before the port was tried.
          expect(run.stdout).toContain("Secret (shown once, store it now)");
          expect(lines[0]).toContain("The admin secret printed above is valid and will not be shown again.");
        }
      } finally {
        held.stop(true);
        rmSync(dir, { recursive: true, force: true });
      }
    }, forStarts(1));
  }
});
