import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, spawnScript } from "../support/processes.ts";
import { seedDataDir } from "../support/server.ts";

// One pass: the dependencies are made unreachable on purpose; the run's own backends play no part.

/**
 * `npm start` with PostgreSQL or the S3 store unreachable ends with status 1 and one line on
 * stderr naming what could not be reached and the variable that points at it, instead of an
 * uncaught stack trace. The URL's password is never printed.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function start(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), "media-unreachable-"));
  dirs.push(dataDir);
  await seedDataDir(dataDir);
  const child = spawnScript("app/main.ts", { DATA_DIR: dataDir, PORT: String(await freePort()), STORAGE_PORT: String(await freePort()), JWT_SECRET: "test-jwt-secret-that-is-long-enough", ...env });
  const code = await child.finished();
  return { code, stderr: child.errors().trim(), stdout: child.output() };
}

test("PostgreSQL refusing connections: one line naming it and DATABASE_URL, status 1", async () => {
  const port = await freePort();
  const { code, stderr } = await start({ DATABASE_URL: `postgres://media:sekrit-password@127.0.0.1:${port}/media` });
  expect(code).toBe(1);
  const lines = stderr.split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith(`Cannot start: PostgreSQL at 127.0.0.1:${port}/media is unreachable or refused the service (`);
  expect(lines[0]).toEndWith("Check DATABASE_URL.");
  expect(lines[0]).toContain("ECONNREFUSED");
  expect(stderr).not.toContain("sekrit-password");
}, 60_000);

test("the S3 store refusing connections: one line naming it and S3_ENDPOINT, status 1", async () => {
  const port = await freePort();
  const { code, stderr } = await start({ S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_ACCESS_KEY_ID: "id", S3_SECRET_ACCESS_KEY: "secret" });
  expect(code).toBe(1);
  const lines = stderr.split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith(`Cannot start: the S3 store at http://127.0.0.1:${port} is unreachable or refused the service (`);
  expect(lines[0]).toEndWith("Check S3_ENDPOINT.");
}, 60_000);
