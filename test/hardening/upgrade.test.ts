import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { objectPath } from "../../domain/media/storage-keys.ts";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { signJwt, startServer, type TestServer } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";

/**
 * Upgrading (docs/operations.md): a database made by the previous release's migrations, holding
 * that release's data, is opened by this release, which applies the rest at start. The smoke
 * checks then read the old data (including what the new migrations backfill), write new data,
 * search and reconcile. "The previous release" is every migration but the newest ones since
 * the release named in PREVIOUS_RELEASE_MIGRATIONS, and at least the newest one, so an upgrade
 * is always exercised. A second test keeps migrations safe for old instances still running.
 */
const migrations = join(import.meta.dir, "../../db/migrations");
const journal = JSON.parse(readFileSync(join(migrations, "meta/_journal.json"), "utf8")) as { entries: { idx: number; tag: string }[] };
/** How many migrations the last release shipped; raise it at each release. */
const PREVIOUS_RELEASE_MIGRATIONS = 11;
const base = Math.min(PREVIOUS_RELEASE_MIGRATIONS, journal.entries.length - 1);

/** A migrations folder holding only the first `count` migrations, as an older checkout has it. */
function olderMigrations(count: number): string {
  const dir = mkdtempSync(join(tmpdir(), "media-old-migrations-"));
  mkdirSync(join(dir, "meta"));
  const entries = journal.entries.slice(0, count);
  for (const e of entries) cpSync(join(migrations, `${e.tag}.sql`), join(dir, `${e.tag}.sql`));
  writeFileSync(join(dir, "meta/_journal.json"), JSON.stringify({ ...journal, entries }));
  return dir;
}

const orgId = crypto.randomUUID();
const bucketId = crypto.randomUUID();
const liveIds = [crypto.randomUUID(), crypto.randomUUID()];
const deletedId = crypto.randomUUID();

/** The previous release's data, written with SQL that release understood. */
const seed = `
  insert into organizations (id, name) values ('${orgId}', 'Upgraded');
  insert into org_usage (org_id, used_storage, allocated_storage, object_count) values ('${orgId}', 300, 10737418240, 2);
  insert into buckets (id, org_id, name) values ('${bucketId}', '${orgId}', 'from-before');
  insert into media_objects (id, org_id, bucket_id, key, size, content_type, kind) values
    ('${liveIds[0]}', '${orgId}', '${bucketId}', 'old/one.txt', 100, 'text/plain', 'other'),
    ('${liveIds[1]}', '${orgId}', '${bucketId}', 'old/two.txt', 200, 'text/plain', 'other');
  insert into media_objects (id, org_id, bucket_id, key, size, content_type, kind, deleted_at) values
    ('${deletedId}', '${orgId}', '${bucketId}', 'old/gone.txt', 50, 'text/plain', 'other', now());
${
  // A release that has the bucket's object counter keeps it itself; an older one leaves it to the backfill.
  journal.entries.findIndex((e) => e.tag === "0010_bucket_object_count") < base ? `update buckets set object_count = 2 where id = '${bucketId}';` : ""
}`;

describe(`upgrade from the previous release's schema (${base} of ${journal.entries.length} migrations)`, () => {
  let server: TestServer;
  let dataDir: string;
  let oldFolder: string;
  let dropDatabase: (() => Promise<void>) | null = null;
  let env: Record<string, string> = {};

  beforeAll(async () => {
    oldFolder = olderMigrations(base);
    dataDir = mkdtempSync(join(tmpdir(), "media-upgrade-"));
    if (testEnv.mode === "services") {
      const name = `media_upgrade_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
      const admin = postgres(testEnv.databaseUrl!, { max: 1, onnotice: () => {} });
      await admin.unsafe(`create database ${name}`);
      const url = new URL(testEnv.databaseUrl!);
      url.pathname = `/${name}`;
      const old = postgres(url.toString(), { max: 1, onnotice: () => {} });
      await migratePostgres(drizzlePostgres(old), { migrationsFolder: oldFolder });
      await old.unsafe(seed);
      await old.end();
      env = { DATABASE_URL: url.toString() };
      dropDatabase = async () => {
        await admin.unsafe(`drop database if exists ${name} with (force)`);
        await admin.end();
      };
    } else {
      const old = await PGlite.create(join(dataDir, "db"), { extensions: { pg_trgm } });
      await migratePglite(drizzlePglite(old), { migrationsFolder: oldFolder });
      await old.exec(seed);
      await old.close();
    }
    // This release starts on it: the remaining migrations run now, as in production.
    server = await startServer({ embedded: true, dataDir, env });
    for (const [key, size] of [["old/one.txt", 100], ["old/two.txt", 200]] as const) {
      await server.services.deps.storage.put(objectPath(bucketId, key), bytesOf(size), { contentType: "text/plain" });
    }
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(oldFolder, { recursive: true, force: true });
  });

  test("every migration ran, in order, once", async () => {
    const { rowsOf } = await import("../../db/client.ts");
    const { sql } = await import("drizzle-orm");
    const rows = rowsOf<{ n: number }>(await server.services.deps.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`));
    expect(rows[0]!.n).toBe(journal.entries.length);
  });

  test("smoke checks: old data reads right, new data writes, search and reconcile agree", async () => {
    const jwt = await signJwt({ sub: crypto.randomUUID(), org_id: orgId, email: "upgrader@example.test" });
    const owner = server.api.withToken(jwt);
    expect((await owner.get("/api/me")).status).toBe(200);
    expect((await owner.get("/api/buckets")).body.data.map((b: { name: string }) => b.name)).toEqual(["from-before"]);
    const listed = await owner.get(`/api/media?bucketId=${bucketId}`);
    expect(listed.status).toBe(200);
    // total comes from a counter a newer migration added and backfilled.
    expect({ total: listed.body.total, keys: listed.body.data.map((m: { key: string }) => m.key).sort() }).toEqual({ total: 2, keys: ["old/one.txt", "old/two.txt"] });
    expect((await owner.get(`/api/media/${liveIds[0]}`)).body).toMatchObject({ key: "old/one.txt", size: 100, bucketId });
    expect((await owner.get(`/api/media/${deletedId}`)).status).toBe(404);
    const download = await owner.post("/api/presign/download", { objectId: liveIds[1] });
    expect((await fetch(download.body.url)).status).toBe(200);

    const created = await upload(owner, bucketId, "new/three.txt", bytesOf(300), { contentType: "text/plain" });
    expect(created.size).toBe(300);
    await eventually(async () => {
      const found = await owner.get("/api/search?q=three");
      return found.body.media?.some((m: { id: string }) => m.id === created.id) ? true : undefined;
    }, { what: "the new object in search" });
    expect((await owner.get("/api/usage")).body).toMatchObject({ usedStorage: 600, objectCount: 3 });

    const key = await owner.post("/api/api-keys", { name: "after the upgrade", scopes: ["admin"] });
    expect(key.status).toBe(201);
    const report = (await server.api.withToken(key.body.secret).post("/api/reconcile", {})).body;
    expect([report.bytesWithoutRow.count, report.rowsWithoutBytes.count, report.usage.consistent]).toEqual([0, 0, true]);
  });
});

describe("migrations stay safe while instances of the previous release still run", () => {
  // The previous release keeps reading and writing during a rolling upgrade: a new migration
  // may add (tables, nullable columns or columns with defaults, indexes), not take away or
  // change what that release uses. A change that has to (drop, rename, retype, tighten) ships
  // one release after the code stopped using it, and its file says so in a comment.
  const files = readdirSync(migrations).filter((f) => f.endsWith(".sql")).sort();
  const breaking = /\bDROP\s+(TABLE|COLUMN)\b|\bRENAME\b|\bALTER\s+COLUMN\b[^;]*\b(TYPE|SET\s+NOT\s+NULL)\b|\bADD\s+COLUMN\b(?![^;]*\bDEFAULT\b)[^;]*\bNOT\s+NULL\b/i;
  for (const file of files.slice(PREVIOUS_RELEASE_MIGRATIONS)) {
    test(`${file} only adds, or says why old instances are unaffected`, () => {
      const text = readFileSync(join(migrations, file), "utf8");
      if (text.includes("-- safe with the previous release:")) return;
      expect(text.match(breaking)?.[0] ?? null).toBeNull();
    });
  }
  // Expand, then contract, and one more: a column filled from other rows (a backfill) is not
  // kept current by the previous release, which writes those rows without knowing of it. The
  // database keeps it current (a trigger setting it, in that migration or a later one), or
  // the file says why the previous release does (`-- kept current by the previous release: …`).
  const texts = files.map((f) => readFileSync(join(migrations, f), "utf8"));
  for (const [i, file] of files.entries()) {
    if (i < PREVIOUS_RELEASE_MIGRATIONS) continue;
    test(`${file}: a column it backfills from other rows is kept current whoever writes them`, () => {
      expect(derivedColumnsLeftToTheCode(texts[i]!, texts.slice(i))).toEqual([]);
    });
  }
  test("the rule catches what it must", () => {
    const added = 'ALTER TABLE "a" ADD COLUMN "n" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint\nUPDATE "a" SET "n" = (SELECT count(*) FROM "b" WHERE "b"."a_id" = "a"."id");';
    expect(derivedColumnsLeftToTheCode(added, [added])).toEqual(["n"]);
    const kept = 'CREATE TRIGGER "b_n" AFTER INSERT ON "b" FOR EACH ROW EXECUTE FUNCTION f();\nCREATE FUNCTION f() RETURNS trigger AS $$ BEGIN UPDATE a SET n = n + 1; RETURN NULL; END $$;';
    expect(derivedColumnsLeftToTheCode(added, [added, kept])).toEqual([]);
    expect(derivedColumnsLeftToTheCode(`${added}\n-- kept current by the previous release: it counts b`, [added])).toEqual([]);
    expect(derivedColumnsLeftToTheCode('ALTER TABLE "a" ADD COLUMN "m" text;', [])).toEqual([]);
    for (const bad of ['ALTER TABLE "a" DROP COLUMN "b";', 'ALTER TABLE "a" RENAME COLUMN "b" TO "c";', 'ALTER TABLE "a" ALTER COLUMN "b" SET NOT NULL;', 'ALTER TABLE "a" ADD COLUMN "b" text NOT NULL;']) {
      expect(breaking.test(bad)).toBe(true);
    }
    expect(breaking.test('ALTER TABLE "buckets" ADD COLUMN "object_count" bigint DEFAULT 0 NOT NULL;')).toBe(false);
  });
});

/**
 * Columns a migration adds and fills from other rows (`ADD COLUMN "c"`, then `UPDATE … SET "c" =
 * (SELECT …)`) that neither a trigger in it or a later migration (`laterTexts`, itself first)
 * sets, nor a comment says the previous release keeps current.
 */
function derivedColumnsLeftToTheCode(text: string, laterTexts: string[]): string[] {
  if (text.includes("-- kept current by the previous release:")) return [];
  const added = [...text.matchAll(/\bADD\s+COLUMN\s+"?(\w+)"?/gi)].map((m) => m[1]!);
  const backfilled = added.filter((c) => new RegExp(`\\bUPDATE\\b[^;]*\\bSET\\s+"?${c}"?\\s*=[^;]*\\bSELECT\\b`, "i").test(text));
  const keptByTrigger = (c: string) =>
    laterTexts.some((t) => /\bCREATE\s+TRIGGER\b/i.test(t) && new RegExp(`\\bSET\\s+"?${c}"?\\s*=`, "i").test(t));
  return backfilled.filter((c) => !keptByTrigger(c));
}
