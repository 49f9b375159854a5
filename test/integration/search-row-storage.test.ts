import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { startServer, type TestServer } from "../support/server.ts";

/**
 * What a search reads of media_search stays in the row (storage MAIN), and only the body of a
 * file's extracted text, which no search reads, may be moved out of line first (EXTENDED): a
 * document's vector of a few kilobytes was moved out otherwise, and ranking read more pages for
 * each matching document.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

describe("media_search's row storage", () => {
  test("the vector, key, labels, metadata and label ids are kept in the row; the body goes out first", async () => {
    const rows = rowsOf<{ name: string; storage: string }>(
      await server.services.deps.db.execute(
        sql`select attname as name, attstorage::text as storage from pg_attribute where attrelid = 'media_search'::regclass and attname in ('vector', 'key', 'labels', 'meta', 'tag_ids', 'category_ids', 'body') order by attname`,
      ),
    );
    expect(Object.fromEntries(rows.map((r) => [r.name, r.storage]))).toEqual({
      body: "x",
      category_ids: "m",
      key: "m",
      labels: "m",
      meta: "m",
      tag_ids: "m",
      vector: "m",
    });
  });
});
