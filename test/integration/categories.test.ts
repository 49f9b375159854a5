import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { objectCategories } from "../../db/schema/index.ts";
import { insertObject, newBucket, softDeleteObject } from "../support/objects.ts";
import { withTwoOrgs } from "../support/fixtures.ts";
import { newOrg, type TestOrg, type TestServer } from "../support/server.ts";

let server: TestServer;
let org: TestOrg;
let other: TestOrg;
let bucket: { id: string };
let otherBucket: { id: string };

withTwoOrgs({ ready: (made) => void ({ server, org, other, bucket, otherBucket } = made) });

interface Node {
  id: string;
  name: string;
  slug: string;
  parentId: string | null;
  objectCount: number;
  children: Node[];
}

const create = async (who: TestOrg, name: string, parentId?: string) => {
  const res = await who.admin.post("/api/categories", { name, ...(parentId ? { parentId } : {}) });
  expect(res.status).toBe(201);
  return res.body as { id: string; name: string; slug: string; parentId: string | null };
};
const tree = async (who: TestOrg) => (await who.admin.get("/api/categories")).body as { data: Node[]; total: number; hasMore: boolean };
/** name(children...) for compact assertions. */
const shape = (nodes: Node[]): string[] => nodes.map((n) => (n.children.length ? `${n.name}(${shape(n.children).join(",")})` : n.name));
const assigned = async (objectId: string) =>
  (await server.services.deps.db.select().from(objectCategories).where(eq(objectCategories.objectId, objectId))).map((r) => r.categoryId).sort();

describe("categories", () => {
  test("create a root and a child: 201 with slug and parentId", async () => {
    const o = await newOrg(server, "create");
    const res = await o.admin.post("/api/categories", { name: "Animals" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: "Animals", slug: "animals", parentId: null, createdAt: expect.any(String) });
    const child = await create(o, "Big Cats", res.body.id);
    expect(child).toMatchObject({ name: "Big Cats", slug: "big-cats", parentId: res.body.id });
  });

  test("the nested tree: roots with children, siblings by name, total counts every node", async () => {
    const o = await newOrg(server, "tree");
    const animals = await create(o, "Animals");
    const plants = await create(o, "Plants");
    const cats = await create(o, "Cats", animals.id);
    await create(o, "Birds", animals.id);
    await create(o, "Lions", cats.id);
    await create(o, "Trees", plants.id);
    await create(o, "Misc");
    const res = await o.admin.get("/api/categories");
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(7);
    expect(res.body.hasMore).toBe(false);
    expect(shape(res.body.data)).toEqual(["Animals(Birds,Cats(Lions))", "Misc", "Plants(Trees)"]);
    const catsNode = res.body.data[0].children[1];
    expect(catsNode).toEqual({
      id: cats.id,
      name: "Cats",
      slug: "cats",
      parentId: animals.id,
      objectCount: 0,
      createdAt: expect.any(String),
      children: [expect.objectContaining({ name: "Lions", parentId: cats.id, children: [] })],
    });
    // other organizations see nothing of it
    expect((await tree(other)).data.some((n) => n.name === "Animals")).toBe(false);
  });

  test("slugs are unique per organization: a repeated name gets a suffix, siblings included", async () => {
    const o = await newOrg(server, "slugs");
    const a = await create(o, "Cats");
    const b = await create(o, "Pets");
    expect((await create(o, "cats", b.id)).slug).toBe("cats-2");
    expect((await create(o, "Cats!", b.id)).slug).toBe("cats-3");
    expect((await create(o, "Cats 2")).slug).toBe("cats-2-2");
    expect(a.slug).toBe("cats");
    expect((await create(other, "Cats")).slug).toBe("cats");
  });

  test("concurrent creates with one name all get distinct slugs", async () => {
    const o = await newOrg(server, "slug race");
    const results = await Promise.all(Array.from({ length: 20 }, () => o.admin.post("/api/categories", { name: "Same" })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const slugs = results.map((r) => r.body.slug).sort();
    expect(new Set(slugs).size).toBe(20);
    expect(slugs).toContain("same");
  });

  test("a parent from another organization or unknown is 404; invalid input is 400", async () => {
    const theirs = await create(other, "Theirs");
    for (const parentId of [theirs.id, crypto.randomUUID()]) {
      const res = await org.admin.post("/api/categories", { name: "Child", parentId });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe("Parent category not found");
    }
    for (const body of [{ name: "" }, { name: "---" }, { name: "x".repeat(129) }, { name: "ok", parentId: "nope" }, { name: "ok", parentId: null }]) {
      const res = await org.admin.post("/api/categories", body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
    }
    expect((await tree(other)).data.find((n) => n.id === theirs.id)!.children).toEqual([]);
  });

  test("deleting a middle node moves its children to the root and removes its assignments, at once", async () => {
    const o = await newOrg(server, "delete middle");
    const ob = await newBucket(o);
    const top = await create(o, "Top");
    const middle = await create(o, "Middle", top.id);
    const leaf1 = await create(o, "Leaf one", middle.id);
    await create(o, "Leaf two", middle.id);
    await create(o, "Deep", leaf1.id);
    await create(o, "Sibling", top.id);
    const obj = await insertObject(server, o, ob.id);
    await o.admin.put(`/api/objects/${obj.id}/categories`, { categoryIds: [middle.id, leaf1.id] });
    expect((await other.admin.delete(`/api/categories/${middle.id}`)).status).toBe(404);
    const res = await o.admin.delete(`/api/categories/${middle.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: middle.id, deleted: true, childrenMovedToRoot: 2, unassignedObjects: 1 });
    const after = await tree(o);
    expect(shape(after.data)).toEqual(["Leaf one(Deep)", "Leaf two", "Top(Sibling)"]);
    expect(after.total).toBe(5);
    expect(after.data[0]!.parentId).toBeNull();
    expect(await assigned(obj.id)).toEqual([leaf1.id]);
    expect((await o.admin.delete(`/api/categories/${middle.id}`)).status).toBe(404);
  });

  test("objects_set_categories replaces; unknown or foreign ids are 404 and change nothing", async () => {
    const [a, b, c] = [await create(org, "set a"), await create(org, "set b"), await create(org, "set c")];
    const foreign = await create(other, "foreign cat");
    const obj = await insertObject(server, org, bucket.id);
    const first = await org.admin.put(`/api/objects/${obj.id}/categories`, { categoryIds: [b.id, a.id] });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      objectId: obj.id,
      categories: [
        { id: a.id, name: "set a", slug: "set-a" },
        { id: b.id, name: "set b", slug: "set-b" },
      ],
    });
    expect((await org.admin.put(`/api/objects/${obj.id}/categories`, { categoryIds: [c.id] })).body.categories.map((x: { id: string }) => x.id)).toEqual([c.id]);
    for (const bad of [foreign.id, crypto.randomUUID()]) {
      const res = await org.admin.put(`/api/objects/${obj.id}/categories`, { categoryIds: [a.id, bad] });
      expect(res.status).toBe(404);
      expect(res.body.error.details).toEqual({ missingIds: [bad] });
    }
    expect(await assigned(obj.id)).toEqual([c.id]);
    expect((await org.admin.put(`/api/objects/${obj.id}/categories`, { categoryIds: [] })).body.categories).toEqual([]);
    const theirs = await insertObject(server, other, otherBucket.id);
    expect((await org.admin.put(`/api/objects/${theirs.id}/categories`, { categoryIds: [a.id] })).status).toBe(404);
    expect((await org.admin.put(`/api/objects/${obj.id}/categories`, { categoryIds: "x" })).status).toBe(400);
  });

  test("objectCount counts live objects only", async () => {
    const o = await newOrg(server, "counts");
    const ob = await newBucket(o);
    const cat = await create(o, "Counted");
    const [o1, o2] = [await insertObject(server, o, ob.id), await insertObject(server, o, ob.id)];
    for (const x of [o1, o2]) await o.admin.put(`/api/objects/${x.id}/categories`, { categoryIds: [cat.id] });
    expect((await tree(o)).data[0]!.objectCount).toBe(2);
    await softDeleteObject(server, o1.id);
    expect((await tree(o)).data[0]!.objectCount).toBe(1);
  });

  test("a bucket-restricted key: sees the tree, assigns in its bucket only, cannot delete", async () => {
    const o = await newOrg(server, "restricted");
    const [b1, b2] = [await newBucket(o), await newBucket(o)];
    const key = await o.keyClient(["read", "write", "delete"], { bucketId: b1.id });
    const cat = (await key.post("/api/categories", { name: "Made by key" })).body;
    expect(cat.slug).toBe("made-by-key");
    const [mine, notMine] = [await insertObject(server, o, b1.id), await insertObject(server, o, b2.id)];
    expect((await key.put(`/api/objects/${mine.id}/categories`, { categoryIds: [cat.id] })).status).toBe(200);
    expect((await key.put(`/api/objects/${notMine.id}/categories`, { categoryIds: [cat.id] })).status).toBe(403);
    await o.admin.put(`/api/objects/${notMine.id}/categories`, { categoryIds: [cat.id] });
    expect((await key.get("/api/categories")).body.data[0].objectCount).toBe(1);
    expect((await o.admin.get("/api/categories")).body.data[0].objectCount).toBe(2);
    const del = await key.delete(`/api/categories/${cat.id}`);
    expect(del.status).toBe(403);
    expect(del.body.error.code).toBe("forbidden");
    expect((await tree(o)).total).toBe(1);
  });
});

describe("moving categories (PUT /api/categories/{id}/parent)", () => {
  test("a category moves with its subtree; to the root with null; filters follow the new shape", async () => {
    const europe = await create(org, `Europe ${crypto.randomUUID().slice(0, 6)}`);
    const asia = await create(org, `Asia ${crypto.randomUUID().slice(0, 6)}`);
    const italy = await create(org, "Italy moving", europe.id);
    const rome = await create(org, "Rome moving", italy.id);
    const obj = await insertObject(server, org, bucket.id, { key: `move/${crypto.randomUUID()}.png` });
    expect((await org.admin.put(`/api/objects/${obj.id}/categories`, { categoryIds: [rome.id] })).status).toBe(200);
    const inAsia = () => org.admin.get(`/api/media?bucketId=${bucket.id}&categories=${asia.slug}`);
    expect((await inAsia()).body.total).toBe(0);

    const moved = await org.admin.put(`/api/categories/${italy.id}/parent`, { parentId: asia.id });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: italy.id, parentId: asia.id, slug: italy.slug });
    const t = await tree(org);
    const asiaNode = t.data.find((n) => n.id === asia.id)!;
    expect(shape([asiaNode])).toEqual([`${asia.name}(Italy moving(Rome moving))`]);
    expect(t.data.find((n) => n.id === europe.id)!.children).toEqual([]);
    // The object is in Rome, now below Asia.
    expect((await inAsia()).body.data.map((o: { id: string }) => o.id)).toEqual([obj.id]);

    const root = await org.admin.put(`/api/categories/${italy.id}/parent`, { parentId: null });
    expect(root.status).toBe(200);
    expect(root.body.parentId).toBeNull();
    expect((await inAsia()).body.total).toBe(0);
  });

  test("under itself or its own descendant: 409, nothing changes", async () => {
    const a = await create(org, `Cycle A ${crypto.randomUUID().slice(0, 6)}`);
    const b = await create(org, "Cycle B", a.id);
    const c = await create(org, "Cycle C", b.id);
    for (const parentId of [a.id, b.id, c.id]) {
      const res = await org.admin.put(`/api/categories/${a.id}/parent`, { parentId });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("conflict");
    }
    const t = await tree(org);
    expect(shape(t.data.filter((n) => n.id === a.id))).toEqual([`${a.name}(Cycle B(Cycle C))`]);
  });

  test("crossing moves at the same time never make a cycle", async () => {
    const x = await create(org, `Cross X ${crypto.randomUUID().slice(0, 6)}`);
    const y = await create(org, `Cross Y ${crypto.randomUUID().slice(0, 6)}`);
    const [one, two] = await Promise.all([
      org.admin.put(`/api/categories/${x.id}/parent`, { parentId: y.id }),
      org.admin.put(`/api/categories/${y.id}/parent`, { parentId: x.id }),
    ]);
    expect([one.status, two.status].sort()).toEqual([200, 409]);
  });

  test("another organization's category, as the one moved or as the parent: 404", async () => {
    const mine = await create(org, `Mine ${crypto.randomUUID().slice(0, 6)}`);
    const theirs = await create(other, `Theirs ${crypto.randomUUID().slice(0, 6)}`);
    expect((await org.admin.put(`/api/categories/${mine.id}/parent`, { parentId: theirs.id })).status).toBe(404);
    expect((await other.admin.put(`/api/categories/${mine.id}/parent`, { parentId: null })).status).toBe(404);
  });
});

describe("media_list by tag and category", () => {
  test("tags must all match; a category includes its descendants; the total counts the matches", async () => {
    const b = await newBucket(org, "filters");
    const parent = await create(org, `Filter parent ${crypto.randomUUID().slice(0, 6)}`);
    const child = await create(org, "Filter child", parent.id);
    const tag = async (name: string) => (await org.admin.post("/api/tags", { name })).body as { id: string; slug: string };
    const red = await tag(`red ${crypto.randomUUID().slice(0, 6)}`);
    const big = await tag(`big ${crypto.randomUUID().slice(0, 6)}`);
    const [one, two, three] = await Promise.all([1, 2, 3].map((n) => insertObject(server, org, b.id, { key: `f/${n}.png` })));
    await org.admin.put(`/api/objects/${one!.id}/tags`, { tagIds: [red.id, big.id] });
    await org.admin.put(`/api/objects/${two!.id}/tags`, { tagIds: [red.id] });
    await org.admin.put(`/api/objects/${one!.id}/categories`, { categoryIds: [child.id] });
    await org.admin.put(`/api/objects/${three!.id}/categories`, { categoryIds: [parent.id] });
    const ids = async (query: string) => {
      const res = await org.admin.get(`/api/media?bucketId=${b.id}&sort=key&order=asc&${query}`);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(res.body.data.length);
      return res.body.data.map((o: { key: string }) => o.key);
    };
    expect(await ids(`tags=${red.slug}`)).toEqual(["f/1.png", "f/2.png"]);
    expect(await ids(`tags=${red.slug},${big.slug}`)).toEqual(["f/1.png"]);
    expect(await ids(`categories=${parent.slug}`)).toEqual(["f/1.png", "f/3.png"]);
    expect(await ids(`categories=${child.slug}`)).toEqual(["f/1.png"]);
    expect(await ids(`tags=${red.slug}&categories=${parent.slug}`)).toEqual(["f/1.png"]);
    expect(await ids("tags=no-such-tag")).toEqual([]);
    // Another organization's slugs match nothing here.
    const foreignTag = (await other.admin.post("/api/tags", { name: `red ${crypto.randomUUID().slice(0, 6)}` })).body as { slug: string };
    expect(await ids(`tags=${foreignTag.slug}`)).toEqual([]);
  });
});
