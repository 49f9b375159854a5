import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Apart from server.ts (which re-exports seedDataDir) so that a file starting the real entry
// point on its embedded defaults can seed a data directory without importing the run's
// backends (test/support/env.ts), which would give it a PostgreSQL pass too (test/run.ts).

/**
 * A fresh PGlite database costs seconds (extensions, migrations); copying a migrated one costs
 * milliseconds. The template is keyed by the migrations, so a schema change makes a new one.
 * Tests of one file that start side by side wait for one build rather than each making its own.
 */
let templateBuild: Promise<string> | undefined;
function pgliteTemplate(): Promise<string> {
  return (templateBuild ??= buildPgliteTemplate().finally(() => (templateBuild = undefined)));
}

async function buildPgliteTemplate(): Promise<string> {
  const migrations = join(import.meta.dir, "../../db/migrations");
  const hasher = new Bun.CryptoHasher("sha256");
  for (const f of readdirSync(migrations).sort()) if (f.endsWith(".sql")) hasher.update(readFileSync(join(migrations, f)));
  const dir = join(tmpdir(), `media-pglite-template-${hasher.digest("hex").slice(0, 16)}`);
  if (existsSync(dir)) return dir;
  const { openDatabase } = await import("../../db/client.ts");
  const building = mkdtempSync(join(tmpdir(), "media-pglite-building-"));
  const database = await openDatabase({ dataDir: building });
  await database.close();
  try {
    renameSync(building, dir);
  } catch {
    // Another run built it first; theirs is as good as ours.
    rmSync(building, { recursive: true, force: true });
  }
  return dir;
}

/** Gives a data directory a migrated embedded database, unless it has one already. */
export async function seedDataDir(dataDir: string): Promise<void> {
  if (!existsSync(join(dataDir, "db"))) cpSync(await pgliteTemplate(), join(dataDir, "db"), { recursive: true });
}
