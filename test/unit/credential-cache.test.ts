import { describe, expect, test } from "bun:test";
import { MemoryCredentialCache } from "../../app/credential-cache.ts";
import type { KeyCredential } from "../../domain/ports/credentials.ts";

const key = (id: string, bucketId: string | null = null): KeyCredential => ({
  id,
  orgId: "o",
  userId: "u",
  scopes: ["read"],
  bucketId,
  expiresAt: new Date(Date.now() + 86_400_000),
});

describe("MemoryCredentialCache", () => {
  test("remembers a key until it is forgotten by id or by bucket", async () => {
    const sut = new MemoryCredentialCache({ ttlMs: 60_000, maxEntries: 10 });
    sut.put("h1", key("k1"), sut.version());
    sut.put("h2", key("k2", "b1"), sut.version());
    expect(sut.get("h1")?.id).toBe("k1");
    await sut.forget({ keyId: "k1" });
    expect(sut.get("h1")).toBeUndefined();
    expect(sut.get("h2")?.id).toBe("k2");
    await sut.forget({ bucketId: "b1" });
    expect(sut.get("h2")).toBeUndefined();
  });

  test("a fill that read the database before a forget is dropped", async () => {
    const sut = new MemoryCredentialCache({ ttlMs: 60_000, maxEntries: 10 });
    const before = sut.version();
    await sut.forget({ keyId: "k1" });
    sut.put("h1", key("k1"), before);
    expect(sut.get("h1")).toBeUndefined();
  });

  test("entries expire after the TTL", async () => {
    const sut = new MemoryCredentialCache({ ttlMs: 20, maxEntries: 10 });
    sut.put("h1", key("k1"), sut.version());
    await Bun.sleep(30);
    expect(sut.get("h1")).toBeUndefined();
  });

  test("bounded: the oldest entry makes room", () => {
    const sut = new MemoryCredentialCache({ ttlMs: 60_000, maxEntries: 2 });
    for (const n of [1, 2, 3]) sut.put(`h${n}`, key(`k${n}`), sut.version());
    expect(sut.get("h1")).toBeUndefined();
    expect(sut.get("h3")?.id).toBe("k3");
  });

  test("disabled (invalidations could be missed): serves nothing, keeps nothing", () => {
    const sut = new MemoryCredentialCache({ ttlMs: 60_000, maxEntries: 10 });
    sut.put("h1", key("k1"), sut.version());
    sut.setEnabled(false);
    expect(sut.get("h1")).toBeUndefined();
    sut.put("h2", key("k2"), sut.version());
    expect(sut.size).toBe(0);
    sut.setEnabled(true);
    expect(sut.get("h1")).toBeUndefined();
  });

  test("forget tells the other instances", async () => {
    const sut = new MemoryCredentialCache({ ttlMs: 60_000, maxEntries: 10 });
    const told: unknown[] = [];
    sut.broadcast = async (t) => void told.push(t);
    await sut.forget({ keyId: "k9" });
    expect(told).toEqual([{ keyId: "k9" }]);
  });
});
