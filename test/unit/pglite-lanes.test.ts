import { expect, test } from "bun:test";
import { PGlite } from "@electric-sql/pglite";
import { inLane, onBehalfOf, PgliteLanes } from "../../db/pglite-lanes.ts";

test("a foreground statement asked while searches wait goes before them, behind only the one running", async () => {
  const client = await PGlite.create("memory://");
  try {
    const lanes = new PgliteLanes();
    const back = inLane(client, lanes, "back");
    const fore = inLane(client, lanes, "fore");
    const order: string[] = [];
    const search = (n: number) => back.query(`select ${n} as n, count(*) from generate_series(1, 200000)`).then(() => order.push(`search ${n}`));
    const all = [search(1), search(2), search(3)];
    // Asked after the three searches, while the first runs.
    all.push(fore.query("select 1").then(() => order.push("list")));
    all.push(fore.transaction(async (tx) => (await tx.query("select 2"), order.push("upload"))));
    await Promise.all(all);
    expect(order).toEqual(["search 1", "list", "upload", "search 2", "search 3"]);
  } finally {
    await client.close();
  }
});

test("a failing statement frees the connection for the next", async () => {
  const client = await PGlite.create("memory://");
  try {
    const lanes = new PgliteLanes();
    const fore = inLane(client, lanes, "fore");
    const failed = fore.query("select * from no_such_table").then(
      () => "answered",
      () => "refused",
    );
    expect(await Promise.all([failed, fore.query<{ n: number }>("select 7 as n").then((r) => r.rows[0]!.n)])).toEqual(["refused", 7]);
  } finally {
    await client.close();
  }
});

test("organizations take turns: one that queued many statements does not hold another's behind all of them", async () => {
  const client = await PGlite.create("memory://");
  try {
    const lanes = new PgliteLanes();
    const fore = inLane(client, lanes, "fore");
    const order: string[] = [];
    const as = (org: string, label: string) => onBehalfOf.run(org, () => fore.query("select count(*) from generate_series(1, 20000)").then(() => order.push(label)));
    const all = [as("a", "a1"), as("a", "a2"), as("a", "a3"), as("a", "a4")];
    // b asks after all of a's, while a1 runs.
    all.push(as("b", "b1"), as("b", "b2"));
    await Promise.all(all);
    expect(order).toEqual(["a1", "a2", "b1", "a3", "b2", "a4"]);
  } finally {
    await client.close();
  }
});
