import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** `npm start` as a user runs it: a real process on the embedded defaults. */
const root = join(import.meta.dir, "../..");
const dataDir = mkdtempSync(join(tmpdir(), "media-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

async function start(env: Record<string, string>) {
  const port = await freePort();
  const proc = Bun.spawn([process.execPath, "app/main.ts"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", DATA_DIR: dataDir, PORT: String(port), STORAGE_PORT: String(await freePort()), ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  while (Date.now() - started < 30_000) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {}
    await Bun.sleep(100);
  }
  return {
    url,
    proc,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      return { stdout: await new Response(proc.stdout).text(), stderr: await new Response(proc.stderr).text() };
    },
  };
}

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
  }, 90_000);

  test("INITIAL_ADMIN_KEY becomes the admin secret on a fresh data directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "media-start-key-"));
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
  }, 60_000);

  test("invalid configuration stops the start with a clear message", async () => {
    const proc = Bun.spawn([process.execPath, "app/main.ts"], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, INITIAL_ADMIN_KEY: "short" },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await proc.exited).not.toBe(0);
    expect(await new Response(proc.stderr).text()).toContain("INITIAL_ADMIN_KEY");
  });
});
