import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { btree_gin } from "@electric-sql/pglite/contrib/btree_gin";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { JWT_SECRET, testEnv } from "../support/env.ts";
import { mcpClient } from "../support/fixtures.ts";
import { Api } from "../support/http.ts";
import { resultJson } from "../support/mcp-results.ts";
import { type Child, freePort, spawnScript, untilServing } from "../support/processes.ts";
import { newOrg, signJwt, startServer, type TestOrg, type TestServer, workerEnvFor } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";

/**
 * A rolling upgrade as an operator runs one (docs/operations.md, "Upgrades"): this release has
 * migrated the database, and an instance of the previous release still serves on it and
 * writes. Here that instance is the release before `media_objects.labels` (migration 0020), the
 * repository's own code as of the commit before the migration landed, run from its own tree
 * with this checkout's node_modules. It sets an object's tags and categories, uploads a tagged
 * object and deletes a tag; every read of this release (get, list, list filtered by tag and by
 * category, search, MCP) must then show the same labels, the ones the links say.
 *
 * PostgreSQL only: the two releases run side by side as two processes on one database, which
 * the embedded database (one process's files) cannot be. The old instance runs without Redis
 * (jobs in its own process): the labels do not depend on it.
 */
const root = join(import.meta.dir, "../..");

function git(...args: string[]): string {
  const run = Bun.spawnSync(["git", "-C", root, ...args], { stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr.toString()}`);
  return run.stdout.toString().trim();
}

/** The release before the labels column: the parent of the commit that added its migration. */
function releaseBeforeLabels(): string {
  const added = git("log", "--diff-filter=A", "--format=%H", "-1", "--", "db/migrations/0020_media_labels.sql");
  if (!added) throw new Error("the history does not hold db/migrations/0020_media_labels.sql (a shallow clone?)");
  return git("rev-parse", `${added}^`);
}

type View = { id: string; key: string; tags: { id: string; name: string; slug: string }[]; categories: { id: string; name: string; slug: string }[] };
const labelsOf = (v: View) => ({ tags: v.tags, categories: v.categories });
const slugsOf = (v: View) => ({ tags: v.tags.map((t) => t.slug), categories: v.categories.map((c) => c.slug) });

describe.skipIf(testEnv.mode !== "services")("a rolling upgrade: the release before the labels column writes, this release reads", () => {
  const name = `media_old_writer_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
  let admin: postgres.Sql | null = null;
  let databaseUrl = "";
  let oldTree = "";
  let oldData = "";
  let server: TestServer;
  let old: Child | null = null;
  let oldApi: Api;
  let org: TestOrg;

  beforeAll(async () => {
    admin = postgres(testEnv.databaseUrl!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    const url = new URL(testEnv.databaseUrl!);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    oldTree = mkdtempSync(join(tmpdir(), "media-old-release-"));
    oldData = mkdtempSync(join(tmpdir(), "media-old-data-"));
    // This release first: it applies every migration, as the first new instance of a rollout does.
    server = await startServer({ env: { DATABASE_URL: databaseUrl } });
    const unpacked = Bun.spawnSync(["sh", "-c", `git -C "${root}" archive "${releaseBeforeLabels()}" | tar -x -C "${oldTree}"`], { stderr: "pipe" });
    if (unpacked.exitCode !== 0) throw new Error(`unpacking the previous release: ${unpacked.stderr.toString()}`);
    symlinkSync(join(root, "node_modules"), join(oldTree, "node_modules"));
    const port = await freePort();
    const storage = workerEnvFor(server, "unused");
    old = spawnScript(join(oldTree, "app/main.ts"), {
      DATABASE_URL: databaseUrl,
      DATA_DIR: oldData,
      PORT: String(port),
      STORAGE_PORT: "0",
      JWT_SECRET,
      S3_ENDPOINT: storage.S3_ENDPOINT!,
      S3_BUCKET: storage.S3_BUCKET!,
      S3_ACCESS_KEY_ID: storage.S3_ACCESS_KEY_ID!,
      S3_SECRET_ACCESS_KEY: storage.S3_SECRET_ACCESS_KEY!,
      RATE_LIMIT_PER_MINUTE: "100000",
    });
    // Its own migrator finds nothing to apply: the database is ahead of it, as in a rollout.
    await untilServing(old, `http://127.0.0.1:${port}/readyz`, { what: "the previous release's instance" });
    org = await newOrg(server, "Rolling upgrade");
    oldApi = new Api(`http://127.0.0.1:${port}`, org.jwt);
  }, 180_000);

  afterAll(async () => {
    if (old) {
      old.proc.kill("SIGTERM");
      const stopped = await Promise.race([old.finished().then(() => true), Bun.sleep(30_000).then(() => false)]);
      if (!stopped) old.proc.kill("SIGKILL");
    }
    await server?.stop();
    await admin?.unsafe(`drop database if exists ${name} with (force)`);
    await admin?.end();
    for (const dir of [oldTree, oldData]) if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  test("labels the old instance writes show the same in every read of this release", async () => {
    const api = org.admin;
    const bucket = (await api.post("/api/buckets", { name: "rolling" })).body as { id: string };
    const tag = async (tagName: string) => (await api.post("/api/tags", { name: tagName })).body as { id: string; slug: string };
    const [alpha, beta, gamma] = [await tag("Alpha"), await tag("Beta"), await tag("Gamma")];
    const places = (await api.post("/api/categories", { name: "Places" })).body as { id: string; slug: string };
    // Labelled by this release first, so a view that missed the old instance's changes shows alpha.
    const first = await upload(api, bucket.id, "first.txt", bytesOf(10), { contentType: "text/plain" });
    expect((await api.put(`/api/objects/${first.id}/tags`, { tagIds: [alpha.id] })).status).toBe(200);

    // The previous release writes.
    expect((await oldApi.put(`/api/objects/${first.id}/tags`, { tagIds: [beta.id, gamma.id] })).status).toBe(200);
    expect((await oldApi.put(`/api/objects/${first.id}/categories`, { categoryIds: [places.id] })).status).toBe(200);
    const second = await upload(oldApi, bucket.id, "second.txt", bytesOf(20), { contentType: "text/plain", tags: ["Summer Sale", "beta"] });
    expect((await oldApi.delete(`/api/tags/${gamma.id}`)).status).toBe(200);

    const want = {
      [first.id]: { tags: ["beta"], categories: [places.slug] },
      [second.id]: { tags: ["beta", "summer-sale"], categories: [] },
    };
    // get: the answer every other read is compared with.
    const got = new Map<string, View>();
    for (const id of [first.id, second.id]) {
      const res = await api.get(`/api/media/${id}`);
      expect(res.status).toBe(200);
      got.set(id, res.body);
    }
    expect(Object.fromEntries([...got].map(([id, v]) => [id, slugsOf(v)]))).toEqual(want);

    const agree = (what: string, views: View[], ids: string[]) => {
      expect({ what, ids: views.map((v) => v.id).sort() }).toEqual({ what, ids: [...ids].sort() });
      for (const v of views) expect({ what, id: v.id, labels: labelsOf(v) }).toEqual({ what, id: v.id, labels: labelsOf(got.get(v.id)!) });
    };
    agree("list", (await api.get(`/api/media?bucketId=${bucket.id}`)).body.data, [first.id, second.id]);
    agree("list tags=beta", (await api.get(`/api/media?bucketId=${bucket.id}&tags=beta`)).body.data, [first.id, second.id]);
    agree("list tags=summer-sale", (await api.get(`/api/media?bucketId=${bucket.id}&tags=summer-sale`)).body.data, [second.id]);
    agree("list tags=gamma", (await api.get(`/api/media?bucketId=${bucket.id}&tags=gamma`)).body.data, []);
    agree("list categories=places", (await api.get(`/api/media?bucketId=${bucket.id}&categories=${places.slug}`)).body.data, [first.id]);
    const search = async (query: string) => {
      const res = await api.get(`/api/search?${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 200 });
      return res.body.media as View[];
    };
    agree("search q=summer", await search("q=summer"), [second.id]);
    agree("search q=beta tags=beta", await search("q=beta&tags=beta"), [first.id, second.id]);

    const client = await mcpClient(server, org.adminKey.secret);
    try {
      const fromMcp: View[] = [];
      for (const id of [first.id, second.id]) fromMcp.push(resultJson((await client.callTool({ name: "media_get", arguments: { id } })).content));
      agree("MCP media_get", fromMcp, [first.id, second.id]);
    } finally {
      await client.close();
    }
  });

  test("a label renamed outside this release's code (a later release, an operator's SQL) shows its new name", async () => {
    const api = org.admin;
    const bucket = (await api.post("/api/buckets", { name: "renamed" })).body as { id: string };
    const delta = (await api.post("/api/tags", { name: "Delta" })).body as { id: string };
    const object = await upload(oldApi, bucket.id, "renamed.txt", bytesOf(5), { contentType: "text/plain" });
    expect((await oldApi.put(`/api/objects/${object.id}/tags`, { tagIds: [delta.id] })).status).toBe(200);
    const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await db`update tags set name = 'Delta Force', slug = 'delta-force' where id = ${delta.id}`;
    } finally {
      await db.end();
    }
    const view = (await api.get(`/api/media/${object.id}`)).body as View;
    expect(view.tags).toEqual([{ id: delta.id, name: "Delta Force", slug: "delta-force" }]);
    expect((await api.get(`/api/media?bucketId=${bucket.id}&tags=delta-force`)).body.data.map(labelsOf)).toEqual([labelsOf(view)]);
  });
});

describe("rows an older instance left stale before the labels were kept by the database", () => {
  // The database as it was before 0024_labels_kept_by_database, holding links written without
  // the column (what the release before `labels` did): this release's start applies 0024, whose
  // backfill repairs them.
  const migrations = join(root, "db/migrations");
  const journal = JSON.parse(readFileSync(join(migrations, "meta/_journal.json"), "utf8")) as { entries: { tag: string }[] };
  const before = journal.entries.findIndex((e) => e.tag === "0024_labels_kept_by_database");
  const orgId = crypto.randomUUID();
  const bucketId = crypto.randomUUID();
  const objectId = crypto.randomUUID();
  const tagId = crypto.randomUUID();
  const seed = `
    insert into organizations (id, name) values ('${orgId}', 'Stale');
    insert into org_usage (org_id, used_storage, allocated_storage, object_count) values ('${orgId}', 10, 10737418240, 1);
    insert into buckets (id, org_id, name, object_count) values ('${bucketId}', '${orgId}', 'stale', 1);
    insert into media_objects (id, org_id, bucket_id, key, size, content_type, kind) values ('${objectId}', '${orgId}', '${bucketId}', 'stale.txt', 10, 'text/plain', 'other');
    insert into tags (id, org_id, name, slug) values ('${tagId}', '${orgId}', 'Left Behind', 'left-behind');
    insert into object_tags (org_id, object_id, tag_id) values ('${orgId}', '${objectId}', '${tagId}');`;
  let server: TestServer;
  let folder = "";
  let dataDir = "";
  let drop: (() => Promise<void>) | null = null;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "media-before-0024-"));
    mkdirSync(join(folder, "meta"));
    const entries = journal.entries.slice(0, before);
    for (const e of entries) cpSync(join(migrations, `${e.tag}.sql`), join(folder, `${e.tag}.sql`));
    writeFileSync(join(folder, "meta/_journal.json"), JSON.stringify({ ...journal, entries }));
    dataDir = mkdtempSync(join(tmpdir(), "media-stale-labels-"));
    let env: Record<string, string> = {};
    if (testEnv.mode === "services") {
      const name = `media_stale_labels_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
      const admin = postgres(testEnv.databaseUrl!, { max: 1, onnotice: () => {} });
      await admin.unsafe(`create database ${name}`);
      const url = new URL(testEnv.databaseUrl!);
      url.pathname = `/${name}`;
      const old = postgres(url.toString(), { max: 1, onnotice: () => {} });
      await migratePostgres(drizzlePostgres(old), { migrationsFolder: folder });
      await old.unsafe(seed);
      await old.end();
      env = { DATABASE_URL: url.toString() };
      drop = async () => {
        await admin.unsafe(`drop database if exists ${name} with (force)`);
        await admin.end();
      };
    } else {
      const old = await PGlite.create(join(dataDir, "db"), { extensions: { pg_trgm, btree_gin } });
      await migratePglite(drizzlePglite(old), { migrationsFolder: folder });
      await old.exec(seed);
      await old.close();
    }
    server = await startServer({ embedded: testEnv.mode !== "services", dataDir, env });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await drop?.();
    for (const dir of [folder, dataDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("after the upgrade, get and list show the links' labels", async () => {
    const owner = server.api.withToken(await signJwt({ sub: crypto.randomUUID(), org_id: orgId, email: "stale@example.test" }));
    const want = [{ id: tagId, name: "Left Behind", slug: "left-behind" }];
    expect((await owner.get(`/api/media/${objectId}`)).body.tags).toEqual(want);
    expect((await owner.get(`/api/media?bucketId=${bucketId}`)).body.data.map((v: View) => v.tags)).toEqual([want]);
  });
});
