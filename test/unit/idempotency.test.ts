import { describe, expect, test } from "bun:test";
import { parseIdempotencyKey, type ReplayScope, replayId, sealingKey } from "../../domain/guards/idempotency.ts";
import { capture, replay, seal, unseal } from "../../http/guards/stored-response.ts";
import { MemoryIdempotencyStore } from "../../http/guards/stores/memory.ts";

const scope: ReplayScope = { key: "k1", method: "POST", pathAndQuery: "/api/buckets?x=1", principal: "key:abc", orgId: "org-1" };

describe("replay key derivation", () => {
  test("stable, and a digest that reveals neither key nor URL", () => {
    expect(replayId(scope)).toBe(replayId({ ...scope }));
    expect(replayId(scope)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(replayId(scope)).not.toContain("k1");
  });
  test("each part of the scope makes a distinct request", () => {
    const ids = new Set(
      [
        scope,
        { ...scope, key: "k2" },
        { ...scope, method: "PUT" },
        { ...scope, pathAndQuery: "/api/buckets" },
        { ...scope, pathAndQuery: "/api/buckets?x=2" },
        { ...scope, principal: "key:abd" },
        { ...scope, principal: "user:abc" },
        { ...scope, orgId: "org-2" },
      ].map(replayId),
    );
    expect(ids.size).toBe(8);
  });
  test("fields cannot bleed into each other", () => {
    expect(replayId({ ...scope, principal: "a", orgId: "b,c" })).not.toBe(replayId({ ...scope, principal: "a,b", orgId: "c" }));
  });
  test("method case does not matter", () => {
    expect(replayId({ ...scope, method: "post" })).toBe(replayId(scope));
  });
});

describe("Idempotency-Key header", () => {
  test("absent is null; any non-empty string up to 255 characters is taken as is", () => {
    expect(parseIdempotencyKey(null)).toBeNull();
    expect(parseIdempotencyKey(" a b ")).toBe(" a b ");
    expect(parseIdempotencyKey("x".repeat(255))).toHaveLength(255);
  });
  test("empty or longer than 255 is a 400", () => {
    expect(() => parseIdempotencyKey("")).toThrow(expect.objectContaining({ code: "bad_request", status: 400 }));
    expect(() => parseIdempotencyKey("   ")).toThrow(expect.objectContaining({ code: "bad_request" }));
    expect(() => parseIdempotencyKey("x".repeat(256))).toThrow(expect.objectContaining({ code: "bad_request" }));
  });
});

describe("stored responses", () => {
  test("seal and unseal round-trip; another scope's key cannot open it", () => {
    const stored = { status: 201, headers: [["content-type", "application/json"]] as [string, string][], body: Buffer.from('{"secret":"s3"}').toString("base64") };
    const sealed = seal(stored, sealingKey(scope));
    expect(sealed).not.toContain(stored.body);
    expect(unseal(sealed, sealingKey(scope))).toEqual(stored);
    expect(unseal(sealed, sealingKey({ ...scope, key: "k2" }))).toBeNull();
    expect(unseal("garbage", sealingKey(scope))).toBeNull();
  });

  test("a redirect keeps its status and Location, nothing per-request", async () => {
    const res = new Response(null, { status: 302, headers: { location: "https://s3.example/x", "x-request-id": "r1", ratelimit: "x" } });
    const { stored, response } = await capture(res, 1024);
    expect(stored).toEqual({ status: 302, headers: [["location", "https://s3.example/x"]], body: "" });
    expect(response.status).toBe(302);
    const again = replay(stored!);
    expect(again.status).toBe(302);
    expect(again.headers.get("location")).toBe("https://s3.example/x");
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(again.headers.get("x-request-id")).toBeNull();
  });

  test("JSON and binary bodies replay byte for byte", async () => {
    const bytes = new Uint8Array([0, 255, 1, 254, 10]);
    for (const [body, type] of [[JSON.stringify({ a: "é" }), "application/json"], [bytes, "application/octet-stream"]] as const) {
      const { stored, response } = await capture(new Response(body, { status: 201, headers: { "content-type": type } }), 1024);
      const sent = new Uint8Array(await response.arrayBuffer());
      const replayed = new Uint8Array(await replay(stored!).arrayBuffer());
      expect(replayed).toEqual(sent);
      expect(replay(stored!).status).toBe(201);
    }
  });

  test("a body over the limit is not stored but is still sent whole", async () => {
    const big = "x".repeat(5000);
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 5; i++) c.enqueue(new TextEncoder().encode(big.slice(i * 1000, (i + 1) * 1000)));
        c.close();
      },
    });
    const { stored, response } = await capture(new Response(stream, { status: 200 }), 2500);
    expect(stored).toBeNull();
    expect(await response.text()).toBe(big);
  });
});

describe("MemoryIdempotencyStore", () => {
  const H = 3_600_000;
  test("claim, in flight, done, replay, expiry", async () => {
    const sut = new MemoryIdempotencyStore();
    expect(await sut.begin({ id: "i", owner: "r1", nowMs: 0, leaseMs: 60_000 })).toEqual({ state: "acquired" });
    expect(await sut.begin({ id: "i", owner: "r2", nowMs: 1, leaseMs: 60_000 })).toEqual({ state: "in_flight" });
    await sut.complete("i", "r1", "sealed", 2, 24 * H);
    expect(await sut.begin({ id: "i", owner: "r3", nowMs: 24 * H, leaseMs: 60_000 })).toEqual({ state: "done", response: "sealed" });
    expect(await sut.begin({ id: "i", owner: "r4", nowMs: 24 * H + 2, leaseMs: 60_000 })).toEqual({ state: "acquired" });
  });
  test("release gives the key up; only its owner can release or complete it", async () => {
    const sut = new MemoryIdempotencyStore();
    await sut.begin({ id: "i", owner: "r1", nowMs: 0, leaseMs: 60_000 });
    await sut.release("i", "other");
    expect((await sut.begin({ id: "i", owner: "r2", nowMs: 1, leaseMs: 60_000 })).state).toBe("in_flight");
    await sut.release("i", "r1");
    expect((await sut.begin({ id: "i", owner: "r2", nowMs: 1, leaseMs: 60_000 })).state).toBe("acquired");
    await sut.complete("i", "r1", "late", 2, H);
    expect((await sut.begin({ id: "i", owner: "r3", nowMs: 3, leaseMs: 60_000 })).state).toBe("in_flight");
  });
  test("an expired lease can be taken over, and the late finisher does not overwrite", async () => {
    const sut = new MemoryIdempotencyStore();
    await sut.begin({ id: "i", owner: "r1", nowMs: 0, leaseMs: 1000 });
    expect((await sut.begin({ id: "i", owner: "r2", nowMs: 1000, leaseMs: 1000 })).state).toBe("acquired");
    await sut.complete("i", "r2", "second", 1500, H);
    await sut.complete("i", "r1", "first", 1600, H);
    expect(await sut.begin({ id: "i", owner: "r3", nowMs: 1700, leaseMs: 1000 })).toEqual({ state: "done", response: "second" });
  });
  test("bounded in bytes: the oldest responses go first", async () => {
    const sut = new MemoryIdempotencyStore(10);
    for (const id of ["a", "b", "c"]) {
      await sut.begin({ id, owner: id, nowMs: 0, leaseMs: 1000 });
      await sut.complete(id, id, "12345", 0, H);
    }
    expect((await sut.begin({ id: "a", owner: "x", nowMs: 1, leaseMs: 1000 })).state).toBe("acquired");
    expect((await sut.begin({ id: "c", owner: "x", nowMs: 1, leaseMs: 1000 })).state).toBe("done");
  });
});
