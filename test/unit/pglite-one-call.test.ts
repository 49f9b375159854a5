import { afterAll, beforeAll, expect, test } from "bun:test";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { inOneCall, PARAM_TYPES_KEPT } from "../../db/pglite-one-call.ts";

/**
 * The embedded database's statements go to PGlite's server as one call each
 * (db/pglite-one-call.ts): the answers, the errors and the transactions must be what
 * PGlite's own `query` gives.
 */
let raw: PGlite;
let pg: PGlite;
let calls = 0;

beforeAll(async () => {
  raw = await PGlite.create("memory://");
  const own = raw.execProtocolStream.bind(raw);
  // Counts the calls into the server; the calls themselves are PGlite's.
  raw.execProtocolStream = (message, options) => {
    calls++;
    return own(message, options);
  };
  pg = inOneCall(raw);
  await raw.exec(`create table things (id int primary key, name text not null unique, doc jsonb, tags text[], body bytea, at timestamptz, ok boolean, price numeric)`);
}, 60_000);

afterAll(() => raw.close());

const insert = "insert into things (id, name, doc, tags, body, at, ok, price) values ($1, $2, $3, $4, $5, $6, $7, $8) returning *";
const values = (id: number) => [id, `thing ${id}`, { a: [1, "two"], b: null }, ["x", "y,z", 'q"'], new Uint8Array([0, 1, 255]), new Date("2026-01-02T03:04:05.678Z"), true, "12.50"];

test("a statement run before is one call into the server; PGlite's own query takes six", async () => {
  await pg.query("select $1::int + 1 as n", [1]);
  calls = 0;
  const { rows } = await pg.query<{ n: number }>("select $1::int + 1 as n", [41]);
  expect(rows).toEqual([{ n: 42 }]);
  expect(calls).toBe(1);
  calls = 0;
  await raw.query("select $1::int + 1 as n", [41]);
  expect(calls).toBe(6);
  // A text seen for the first time: its parameter types are asked once, then it runs.
  calls = 0;
  await pg.query("select $1::int * 2 as n", [21]);
  expect(calls).toBe(2);
});

test("values of every kind are written and read as PGlite's own query writes and reads them", async () => {
  const ours = (await pg.query(insert, values(1))).rows[0];
  const theirs = (await raw.query(insert, values(2))).rows[0] as Record<string, unknown>;
  expect(ours).toEqual({ ...theirs, id: 1, name: "thing 1" });
  expect(ours).toMatchObject({ doc: { a: [1, "two"], b: null }, tags: ["x", "y,z", 'q"'], ok: true, price: "12.50" });
  const again = await pg.query("select * from things where id = any($1::int[]) order by id", [[1, 2]]);
  const same = await raw.query("select * from things where id = any($1::int[]) order by id", [[1, 2]]);
  expect(again.rows).toEqual(same.rows);
  expect(again.fields).toEqual(same.fields);
  // Nulls, array rows and the affected count.
  const nulls = await pg.query("update things set doc = $1, tags = $2 where id = $3", [null, undefined, 1]);
  expect(nulls.affectedRows).toBe(1);
  const arrays = await pg.query("select id, doc from things where id = $1", [1], { rowMode: "array" });
  expect(arrays.rows).toEqual([[1, null]]);
});

test("a failing statement throws PostgreSQL's error and leaves the connection ready", async () => {
  await pg.query(insert, values(10));
  const err = await pg.query(insert, values(10)).catch((e: unknown) => e as Record<string, unknown>);
  expect(err).toMatchObject({ code: "23505", query: insert });
  // A value the server cannot take fails at bind; the next statement runs.
  const bad = await pg.query("select * from things where id = $1", ["not a number"]).catch((e: unknown) => e as Record<string, unknown>);
  expect(bad).toMatchObject({ code: "22P02" });
  expect((await pg.query<{ n: number }>("select count(*)::int as n from things where id = $1", [10])).rows).toEqual([{ n: 1 }]);
  // A statement that does not parse is not kept, and says why each time.
  for (let i = 0; i < 2; i++) await expect(pg.query("selec 1")).rejects.toMatchObject({ code: "42601" });
});

test("transactions: their statements commit or roll back together, and a closed one refuses more", async () => {
  await pg.transaction(async (tx) => {
    await tx.query(insert, values(20));
    await tx.query(insert, values(21));
  });
  expect((await pg.query<{ n: number }>("select count(*)::int as n from things where id in (20, 21)")).rows).toEqual([{ n: 2 }]);
  const failed = await pg
    .transaction(async (tx) => {
      await tx.query(insert, values(22));
      await tx.query(insert, values(20)); // already there
    })
    .catch((e: unknown) => e as Record<string, unknown>);
  expect(failed).toMatchObject({ code: "23505" });
  expect((await pg.query<{ n: number }>("select count(*)::int as n from things where id = 22")).rows).toEqual([{ n: 0 }]);
  let kept: Transaction | undefined;
  await pg.transaction(async (tx) => {
    kept = tx;
    await tx.query("select 1");
  });
  await expect(kept!.query("select 1")).rejects.toThrow("Transaction is closed");
});

test("statements asked at once, inside and outside a transaction, each get their own answer", async () => {
  const asked = Array.from({ length: 50 }, (_, i) => (i % 10 === 0 ? pg.transaction(async (tx) => (await tx.query<{ n: number }>("select $1::int as n", [i])).rows[0]!.n) : pg.query<{ n: number }>("select $1::int as n", [i]).then((r) => r.rows[0]!.n)));
  expect(await Promise.all(asked)).toEqual(Array.from({ length: 50 }, (_, i) => i));
});

test("the kept parameter types are bounded: a text forgotten is asked again and still answers", async () => {
  for (let i = 0; i < PARAM_TYPES_KEPT + 50; i++) await pg.query(`select $1::int + ${i} as n`, [1]);
  calls = 0;
  expect((await pg.query<{ n: number }>("select $1::int + 0 as n", [1])).rows).toEqual([{ n: 1 }]);
  expect(calls).toBe(2);
}, 120_000);
