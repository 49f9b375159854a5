import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { testEnv } from "../support/env.ts";
import { START_CEILING_MS } from "../support/processes.ts";

/** `npm run db:migrate` applies every file of db/migrations, and a second run changes nothing. */
// Two runs of a fresh process each, at a start's ceiling each: a loaded machine took over 60 s.
const TWO_STARTS_MS = 2 * START_CEILING_MS;
const root = join(import.meta.dir, "../..");
const journal = JSON.parse(readFileSync(join(root, "db/migrations/meta/_journal.json"), "utf8")) as { entries: unknown[] };

async function migrate(env: Record<string, string>): Promise<{ code: number; log: string }> {
  const proc = Bun.spawn(["npm", "run", "-s", "db:migrate"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, log: out + err };
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("npm run db:migrate", () => {
  test("without DATABASE_URL: the embedded database in DATA_DIR", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "media-migrate-"));
    dirs.push(dataDir);
    for (let run = 0; run < 2; run++) {
      const { code, log } = await migrate({ DATA_DIR: dataDir });
      expect(code).toBe(0);
      expect(log).toContain(`"applied":${journal.entries.length}`);
    }
    const db = await PGlite.create(join(dataDir, "db"));
    try {
      const { rows } = await db.query<{ n: number }>("select count(*)::int as n from drizzle.__drizzle_migrations");
      expect(rows[0]!.n).toBe(journal.entries.length);
      await db.query("select id, key from media_objects limit 1");
    } finally {
      await db.close();
    }
  }, TWO_STARTS_MS);

  test.skipIf(!testEnv.databaseUrl)("with DATABASE_URL: that PostgreSQL database", async () => {
    const admin = postgres(testEnv.databaseUrl!, { max: 1, onnotice: () => {} });
    const name = `media_migrate_${process.pid}_${Date.now()}`;
    const url = new URL(testEnv.databaseUrl!);
    url.pathname = `/${name}`;
    await admin.unsafe(`create database ${name}`);
    try {
      for (let run = 0; run < 2; run++) {
        const { code, log } = await migrate({ DATABASE_URL: url.toString(), DATA_DIR: join(tmpdir(), "media-migrate-unused") });
        expect(code).toBe(0);
        expect(log).toContain(`"applied":${journal.entries.length}`);
      }
      const target = postgres(url.toString(), { max: 1, onnotice: () => {} });
      try {
        const [row] = await target<{ n: number }[]>`select count(*)::int as n from drizzle.__drizzle_migrations`;
        expect(row?.n).toBe(journal.entries.length);
        await target`select id, key from media_objects limit 1`;
      } finally {
        await target.end();
      }
    } finally {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  }, TWO_STARTS_MS);
});
