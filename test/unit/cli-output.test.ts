import { expect, test } from "bun:test";
import { humanBytes, render } from "../../cli/output.ts";

const media = (i: number) => ({
  id: `00000000-0000-4000-8000-00000000000${i}`,
  bucketId: "11111111-1111-4111-8111-111111111111",
  key: `photos/${i}.jpg`,
  size: 1536 * i,
  metadata: { camera: "x" },
  tags: [{ id: "t", name: "beach", slug: "beach" }],
  createdAt: "2026-01-01T00:00:00.000Z",
});

test("a list envelope is a table of its scalar columns; sizes are human; nested objects are left to --json", () => {
  const out = render({ data: [media(1), media(2)], total: 5, hasMore: true }, { width: null });
  const [header, first] = out.split("\n");
  expect(header).toMatch(/^ID\s+BUCKET ID\s+KEY\s+SIZE\s+TAGS\s+CREATED AT$/);
  expect(first).toContain("1.5 KiB");
  expect(first).toContain("beach");
  expect(out).not.toContain("camera");
  expect(out).toContain("2 of 5 (more: use --offset/--limit, or --all)");
  expect(render({ data: [], total: 0, hasMore: false }, { width: null })).toBe("No items.\n");
});

test("a narrow terminal drops columns, links to other records first, and says so", () => {
  const out = render({ data: [media(1)], total: 1, hasMore: false }, { width: 80 });
  expect(out).not.toContain("BUCKET ID");
  expect(out).toMatch(/^ID\s+KEY/);
  expect(out).toMatch(/\(\d more columns?: widen the terminal or use --json\)/);
  for (const line of out.trimEnd().split("\n").slice(0, -1)) expect(line.length).toBeLessThanOrEqual(80);
});

test("an object is key/value lines with nested keys dotted; lists of records inside it are tables", () => {
  const out = render({ user: { id: "u1", email: null }, credential: { scopes: ["read", "write"] } }, { width: null });
  expect(out).toBe("user.id:           u1\nuser.email:        -\ncredential.scopes: read, write\n");
  const search = render({ total: 2, facets: { tags: [{ name: "beach", count: 2 }], kind: { image: 2 } }, media: [media(1), media(2)] }, { width: null });
  expect(search).toContain("total:             2\nfacets.tags:       beach (2)\nfacets.kind.image: 2\n");
  expect(search).toMatch(/media:\nID\s+BUCKET ID/);
});

test("humanBytes", () => {
  expect(humanBytes(0)).toBe("0 B");
  expect(humanBytes(1023)).toBe("1023 B");
  expect(humanBytes(12 * 1024 * 1024)).toBe("12.0 MiB");
  expect(humanBytes(1024 ** 3 * 150)).toBe("150 GiB");
});
