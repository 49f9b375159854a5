import { afterAll, beforeAll, expect, test } from "bun:test";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { eq, sql } from "drizzle-orm";
import { integer, pgTable, text } from "drizzle-orm/pg-core";
import { drizzle } from "drizzle-orm/pglite";
import { inOneCall, keepNamedStatements, NAMED_KEPT, PARAM_TYPES_KEPT } from "../../db/pglite-one-call.ts";

/**
 * The embedded database's statements go to PGlite's server as one call each
 * (db/pglite-one-call.ts): the answers, the errors and the transactions must be what
 * PGlite's own `query` gives.
 */
let raw: PGlite;
let pg: PGlite;
let calls = 0;
/** The first message of each call: P(arse) or B(ind). */
let firsts: string[] = [];

beforeAll(async () => {
  raw = await PGlite.create("memory://");
  const own = raw.execProtocolStream.bind(raw);
  // Counts the calls into the server; the calls themselves are PGlite's.
  raw.execProtocolStream = (message, options) => {
    calls++;
    firsts.push(String.fromCharCode(message[0]!));
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

const things = pgTable("things", { id: integer("id").primaryKey(), name: text("name").notNull() });

test("statements the code prepares by name are prepared on the server once, then only bound and run; others are parsed each time", async () => {
  keepNamedStatements();
  keepNamedStatements(); // once per process, whatever the number of calls
  const db = drizzle(inOneCall(raw));
  const byId = db.select({ name: things.name }).from(things).where(eq(things.id, sql.placeholder("id"))).prepare("thing_by_id");
  expect(await byId.execute({ id: 1 })).toEqual([{ name: "thing 1" }]);
  firsts = [];
  expect(await byId.execute({ id: 10 })).toEqual([{ name: "thing 10" }]);
  expect(firsts).toEqual(["B"]);
  // Inside a transaction too: the same server-side statement.
  firsts = [];
  expect(await db.transaction((tx) => tx.select({ name: things.name }).from(things).where(eq(things.id, sql.placeholder("id"))).prepare("thing_by_id").execute({ id: 20 }))).toEqual([{ name: "thing 20" }]);
  expect(firsts.filter((m) => m === "P" || m === "B")).toEqual(["B"]); // BEGIN and COMMIT go as simple queries (Q, then S)
  // Not prepared by name: parsed every time, as postgres.js sends it. (The same text as a kept
  // one would run as the kept statement: a text is kept whichever call asked for it.)
  await db.select({ id: things.id, name: things.name }).from(things).where(eq(things.id, 1));
  firsts = [];
  await db.select({ id: things.id, name: things.name }).from(things).where(eq(things.id, 1));
  expect(firsts).toEqual(["P"]);
  // A prepared statement that fails leaves it prepared and the connection ready.
  const insertOne = db.insert(things).values({ id: sql.placeholder("id"), name: sql.placeholder("name") }).prepare("thing_insert");
  await insertOne.execute({ id: 30, name: "thirty" });
  await expect(insertOne.execute({ id: 30, name: "again" })).rejects.toMatchObject({ cause: { code: "23505" } });
  firsts = [];
  await insertOne.execute({ id: 31, name: "thirty-one" });
  expect(firsts).toEqual(["B"]);
});

test("texts kept prepared are bounded: past the bound a text asked to be kept runs unnamed and still answers", async () => {
  const prepared = async () => (await raw.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements")).rows[0]!.n;
  const before = await prepared();
  const db = drizzle(inOneCall(raw));
  for (let i = 0; i < NAMED_KEPT + 5; i++) await db.select({ n: sql<number>`${sql.raw(String(i))}::int + ${sql.placeholder("n")}::int` }).from(sql`(select 1) x`).prepare(`bound_${i}`).execute({ n: 1 });
  const last = db.select({ n: sql<number>`${sql.raw(String(NAMED_KEPT + 4))}::int + ${sql.placeholder("n")}::int` }).from(sql`(select 1) x`).prepare("bound_last");
  firsts = [];
  expect(await last.execute({ n: 1 })).toEqual([{ n: NAMED_KEPT + 5 }]);
  expect(firsts).toEqual(["P"]);
  expect((await prepared()) - before).toBe(NAMED_KEPT);
}, 120_000);
