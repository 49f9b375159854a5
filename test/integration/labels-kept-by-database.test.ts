import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { testEnv } from "../support/env.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";

/**
 * `media_objects.labels` is kept by the database's triggers, whoever writes the links: here two
 * transactions on their own connections, as two instances of any release, add a tag each to one
 * object without locking it first. The second waits for the first (the trigger locks the object
 * before it reads the links), so the labels hold both tags, never only the last writer's.
 *
 * PostgreSQL only: the embedded database runs one transaction at a time, so the two cannot
 * overlap there.
 */
describe.skipIf(testEnv.mode !== "services")("labels kept by the database under concurrent writers", () => {
  let server: TestServer;
  let org: TestOrg;
  let sql: postgres.Sql;

  beforeAll(async () => {
    server = await startServer();
    org = await newOrg(server, "Concurrent labels");
    sql = postgres(testEnv.databaseUrl!, { max: 2, onnotice: () => {} });
  });

  afterAll(async () => {
    await sql?.end();
    await server?.stop();
  });

  test("two transactions adding a tag each to one object: the labels hold both", async () => {
    const bucket = (await org.admin.post("/api/buckets", { name: "concurrent" })).body as { id: string };
    const object = await upload(org.admin, bucket.id, "both.txt", bytesOf(8), { contentType: "text/plain" });
    const [one, two] = [(await org.admin.post("/api/tags", { name: "One" })).body, (await org.admin.post("/api/tags", { name: "Two" })).body] as { id: string }[];
    const first = await sql.reserve();
    const second = await sql.reserve();
    try {
      await first`begin`;
      await first`insert into object_tags (org_id, object_id, tag_id) values (${org.orgId}, ${object.id}, ${one!.id})`;
      await second`begin`;
      // Waits on the object's row, held by the first transaction's trigger.
      const blocked = second`insert into object_tags (org_id, object_id, tag_id) values (${org.orgId}, ${object.id}, ${two!.id})`.execute();
      let done = false;
      void blocked.then(() => (done = true));
      await Bun.sleep(300);
      expect(done).toBe(false);
      await first`commit`;
      await blocked;
      await second`commit`;
    } finally {
      first.release();
      second.release();
    }
    const view = (await org.admin.get(`/api/media/${object.id}`)).body as { tags: { slug: string }[] };
    expect(view.tags.map((t) => t.slug)).toEqual(["one", "two"]);
  });
});
