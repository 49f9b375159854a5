import { describe, expect, test } from "bun:test";
import { errorLine, summarize } from "../../mcp/summary.ts";
import { registry } from "../../tools/registry.ts";

/** The line a tool result leads with (mcp/summary.ts): short, and saying what came back. */
const tool = (name: string) => registry.find((t) => t.name === name)!;
const ID = "0b9f3c52-4a8e-4c1e-9a57-1f2d3c4b5a69";
const OBJECT = { id: ID, bucketId: ID, key: "photos/red.png", fileName: "red.png", size: 12_345, contentType: "image/png", kind: "image", tags: [] };

describe("tool result summaries", () => {
  test("a page of a list: how many of how many, where the next page starts, the first few names", () => {
    const line = summarize(tool("media_list"), { limit: 2, offset: 10 }, { data: [OBJECT, { ...OBJECT, key: "b.png" }], total: 340, hasMore: true });
    expect(line).toBe("2 media objects (of 340); more from offset 12: photos/red.png, b.png");
    expect(summarize(tool("tags_list"), {}, { data: [], total: 0, hasMore: false })).toBe("0 tags (of 0)");
    expect(summarize(tool("categories_list"), {}, { data: [{ id: ID, name: "Red" }], total: 1, hasMore: false })).toBe("1 category node (of 1): Red");
    expect(summarize(tool("audit_list"), {}, { data: [], hasMore: true, nextCursor: "abc" })).toBe("0 audit entries; next cursor abc");
  });

  test("search: the results array is found beside total", () => {
    expect(summarize(tool("search"), { q: "red" }, { media: [OBJECT], total: 1, totalRelation: "eq", facets: {}, facetsApproximate: false })).toBe(
      "1 media object (of 1): photos/red.png",
    );
  });

  test("an object: its kind, key, size and id", () => {
    expect(summarize(tool("media_get"), { id: ID }, OBJECT)).toBe(`Media object "photos/red.png" (image, image/png, 12 KiB); id ${ID}`);
    expect(summarize(tool("buckets_create"), { name: "b" }, { id: ID, name: "b", createdAt: "2026-01-01T00:00:00.000Z" })).toBe(`Bucket "b"; id ${ID}`);
    expect(summarize(tool("media_delete"), { id: ID }, { id: ID, deleted: true })).toBe(`Deleted ${ID}`);
  });

  test("an object with nothing naming it gives a few plain fields", () => {
    const line = summarize(tool("usage_get"), {}, { usedStorage: 10, reservedStorage: 0, allocatedStorage: 100, objectCount: 1, egressThisMonth: 0, apiCallsThisMonth: 3, month: "2026-11", plan: "free" });
    expect(line).toBe("Usage summary (free); usedStorage 10; reservedStorage 0; allocatedStorage 100; objectCount 1");
    expect(summarize(tool("media_settings_get"), {}, { stripLocation: true })).toBe("Media settings; stripLocation true");
  });

  test("tools whose generic line would say nothing give their own", () => {
    expect(
      summarize(tool("me_get"), {}, {
        user: { id: ID, email: null },
        organization: { id: ID, name: "Acme" },
        memberships: [],
        credential: { type: "api_key", apiKeyId: ID, serviceCredentialId: null, accessKeyId: "AK1", scopes: ["read", "write"], bucketId: null, expiresAt: null },
      }),
    ).toBe('api_key AK1 in organization "Acme"; scopes read, write');
    const generation = { setId: ID, jobId: ID, items: 2 };
    expect(summarize(tool("sets_generate"), { id: ID }, { ...generation, status: "queued" })).toBe(`Generation of set ${ID} queued: 2 items (job ${ID}); poll sets_get`);
    const r = { itemId: ID, width: 1, height: 1, objectId: null, error: null };
    expect(
      summarize(tool("sets_generate"), { id: ID, wait: true }, {
        ...generation,
        status: "timed_out",
        renditions: [{ ...r, role: "hero", state: "failed", error: "too big" }, { ...r, role: "square", state: "pending" }],
      }),
    ).toBe(`Generation of set ${ID} timed_out: 0 made, 1 failed, 1 pending of 2; hero: too big; poll sets_get`);
    expect(summarize(tool("media_import_get"), { id: ID }, { id: ID, key: "a.png", state: "stored", bytesReceived: 5, totalBytes: 5, objectId: ID, error: null })).toBe(
      `Import ${ID} stored: "a.png", 5 of 5 bytes; objectId ${ID}`,
    );
  });

  test("an error: its code and message", () => {
    expect(errorLine("not_found", "Media object not found")).toBe("Error not_found: Media object not found");
  });

  test("a line is never long, whatever the output", () => {
    const many = Array.from({ length: 50 }, (_, i) => ({ ...OBJECT, key: `${"k".repeat(200)}${i}` }));
    expect(summarize(tool("media_list"), {}, { data: many, total: 50, hasMore: false }).length).toBeLessThanOrEqual(300);
  });
});
