import { describe, expect, test } from "bun:test";
import { type Hashed, SAME_PICTURE_DELTA_E, aroundLargest, groupNear } from "../../domain/media/similar.ts";
import { hashColumns, segmentNeighbours } from "../../domain/media/picture-facts.ts";
import { deltaE, labOf } from "../../domain/media/colors.ts";

/** A deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const popcount = (x: bigint) => x.toString(2).replaceAll("0", "").length;

describe("the segment index", () => {
  test("finds every pair within the radius, at every radius it accepts (pigeonhole over four 16-bit segments)", () => {
    const next = random(7);
    // Near-copies of a few originals (up to 12 bits off), so every distance occurs.
    const hashes: bigint[] = [];
    for (let base = 0; base < 20; base++) {
      const original = BigInt.asUintN(64, (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32)));
      for (let c = 0; c < 10; c++) {
        let h = original;
        const flips = Math.floor(next() * 13);
        for (let f = 0; f < flips; f++) h ^= 1n << BigInt(Math.floor(next() * 64));
        hashes.push(h);
      }
    }
    const items = hashes.map((h, i) => ({ id: String(i), key: String(i), size: 1, hi: Number(h >> 32n), lo: Number(h & 0xffffffffn), lab: null }));
    for (let radius = 0; radius <= 10; radius++) {
      // The groups a brute force makes: every pair compared.
      const parent = hashes.map((_, i) => i);
      const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i]!)));
      for (let i = 0; i < hashes.length; i++) for (let j = i + 1; j < hashes.length; j++) if (popcount(hashes[i]! ^ hashes[j]!) <= radius) parent[root(j)] = root(i);
      const brute = new Map<number, string[]>();
      hashes.forEach((_, i) => brute.set(root(i), [...(brute.get(root(i)) ?? []), String(i)]));
      const expected = [...brute.values()].filter((g) => g.length > 1).map((g) => g.sort().join(",")).sort();
      const got = groupNear(items, radius).map((g) => g.map((x) => x.id).sort().join(",")).sort();
      expect({ radius, groups: got }).toEqual({ radius, groups: expected });
    }
  });

  test("a plain picture is alike only to pictures of a close colour (its hash is all zeros whatever the colour)", () => {
    const flat = (id: string, color: string): Hashed => ({ id, key: id, size: 1, hi: 0, lo: 0, lab: labOf(color) });
    const groups = groupNear(
      [flat("red", "#e02020"), flat("darker red", "#d01818"), flat("blue", "#2050d0"), flat("navy-ish blue", "#2048c8"), flat("green", "#30a030")],
      4,
    ).map((g) => g.map((x) => x.id).sort());
    expect(groups.sort()).toEqual([["blue", "navy-ish blue"], ["darker red", "red"]]);
    // Colours one cell apart, within the distance: joined by the probes, not only by the shared key.
    const near = groupNear([{ id: "a", key: "a", size: 1, hi: 1, lo: 0, lab: { l: 50, a: 0, b: 0 } }, { id: "b", key: "b", size: 1, hi: 0, lo: 0, lab: { l: 50 + SAME_PICTURE_DELTA_E - 1, a: 0, b: 0 } }], 4);
    expect(near.map((g) => g.map((x) => x.id).sort())).toEqual([["a", "b"]]);
    // No stored colour: the hash alone decides.
    expect(groupNear([flat("red", "#e02020"), { ...flat("unknown", "#000000"), lab: null }], 0)).toHaveLength(1);
  });

  test("a duplicate group is what is alike to its largest: a chain of small colour steps is not one group", () => {
    const grey = (id: string, size: number, l: number): Hashed => ({ id, key: id, size, hi: 0, lo: 0, lab: { l, a: 0, b: 0 } });
    // Each step 20 apart: a chain joins them all, but 0 and 40 are not alike.
    const chain = [grey("l0", 100, 0), grey("l20", 50, 20), grey("l40", 90, 40), grey("l60", 10, 60)];
    expect(groupNear(chain, 4)).toHaveLength(1);
    const groups = groupNear(chain, 4).flatMap((c) => aroundLargest(c, 4)).map((g) => g.map((x) => x.id));
    // l0 (largest) keeps l20; l40 keeps l60; every member is alike to its group's first.
    expect(groups).toEqual([["l0", "l20"], ["l40", "l60"]]);
    // The largest in the middle keeps both sides.
    expect(aroundLargest([grey("a", 1, 0), grey("b", 9, 20), grey("c", 2, 40)], 4).map((g) => g.map((x) => x.id))).toEqual([["b", "c", "a"]]);
  });

  test("segments and neighbours", () => {
    expect(hashColumns("ffff000012348000")).toEqual({ phash: BigInt.asIntN(64, 0xffff000012348000n), segments: [0xffff, 0, 0x1234, 0x8000] });
    expect(hashColumns("not a hash")).toBeNull();
    expect(segmentNeighbours(0, 0)).toEqual([0]);
    expect(new Set(segmentNeighbours(0, 1)).size).toBe(17);
    expect(new Set(segmentNeighbours(0xabcd, 2)).size).toBe(137);
  });
});

describe("colours", () => {
  test("names and #rrggbb in CIELAB; red is far from blue and near a darker red", () => {
    expect(labOf("#ffffff")).toEqual({ l: 100, a: 0, b: 0 });
    expect(labOf("#000000")).toEqual({ l: 0, a: 0, b: 0 });
    expect(deltaE(labOf("red")!, labOf("#d01818")!)).toBeLessThan(20);
    expect(deltaE(labOf("red")!, labOf("blue")!)).toBeGreaterThan(100);
    expect(labOf("crimson")).toBeNull();
  });
});
