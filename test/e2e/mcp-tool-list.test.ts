import { describe, expect, test } from "bun:test";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Scope } from "../../domain/access/caller.ts";
import { describeTools } from "../../mcp/server.ts";
import { toolsFor } from "../../tools/access.ts";
import { registry } from "../../tools/registry.ts";
import { DEFAULT_SELECTION, selectTools } from "../../tools/toolsets.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import { inputFields, jsonBytes, MODEL_VIEW_BUDGET, modelView } from "../support/mcp-listing.ts";
import { toolError } from "../support/mcp-results.ts";
import { newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

// One pass: what tools/list shows follows from the credential's scopes, not from the backends.

/**
 * The agent-facing server exposes the same capabilities as the API: the bare /mcp
 * URL lists every tool the credential may use, and `toolsets` and `readonly` only narrow it.
 * Over real HTTP with the SDK's client, as an agent's host connects.
 */
let server: TestServer;
let org: TestOrg;

withServerAndOrg({ ready: (made) => void ({ server, org } = made) });

async function listed(secret: string, query = ""): Promise<Tool[]> {
  const client = await mcpClient(server, secret, "tool-list", query);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

const namesOf = (tools: readonly { name: string }[]) => tools.map((t) => t.name);

/** tools/list as a client that sends nothing but the request sees it: the status and body. */
async function rawList(query: string): Promise<Response> {
  return fetch(`${server.url}/mcp${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${org.adminKey.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
}

describe("the bare /mcp URL", () => {
  test("lists every tool each credential may use: the registry filtered by scopes and bucket", async () => {
    const bucket = await newBucket(org);
    const keys: { name: string; scopes: Scope[]; bucketId?: string }[] = [
      { name: "read", scopes: ["read"] },
      { name: "write", scopes: ["write"] },
      { name: "delete", scopes: ["delete"] },
      { name: "read, write, delete", scopes: ["read", "write", "delete"] },
      { name: "admin", scopes: ["admin"] },
      { name: "read, write, delete; one bucket", scopes: ["read", "write", "delete"], bucketId: bucket.id },
    ];
    for (const k of keys) {
      const key = await org.keyClient(k.scopes, k.bucketId ? { bucketId: k.bucketId } : {});
      const expected = namesOf(toolsFor(registry, { scopes: new Set(k.scopes), bucketId: k.bucketId ?? null }));
      expect({ key: k.name, tools: namesOf(await listed(key.secret)) }).toEqual({ key: k.name, tools: expected });
    }
    const all = namesOf(await listed(org.adminKey.secret));
    expect(all).toEqual(namesOf(registry));
    // What the old default left out is there: sets, storyboards, multipart, usage, billing, keys, trash, webhooks.
    for (const name of ["sets_create", "storyboards_create", "presign_create_multipart", "usage_get", "billing_subscription_get", "api_keys_create", "trash_restore", "webhooks_create"]) {
      expect(all).toContain(name);
    }
  });

  test("what a model reads of an admin key's listing, as sent, fits in 40 KB, and every input field says what it is", async () => {
    const tools = await listed(org.adminKey.secret);
    const size = jsonBytes(modelView(tools));
    console.log(`admin key, bare /mcp: ${tools.length} tools, ${size} bytes a model reads, ${jsonBytes({ tools })} bytes in all`);
    expect(size).toBeLessThanOrEqual(MODEL_VIEW_BUDGET);
    // The listing bench/tool-list.ts measures in process is the one sent over HTTP.
    expect(modelView(tools)).toEqual(modelView(describeTools(registry)));
    expect(tools.flatMap((t) => inputFields(t.inputSchema as never).filter((f) => !f.description?.trim()).map((f) => `${t.name}.${f.path}`))).toEqual([]);
  });
});

describe("toolsets and readonly only narrow", () => {
  const readOnly = namesOf(registry.filter((t) => t.annotations.readOnlyHint));

  test("readonly=true, TRUE, 1, yes, on: only tools that change nothing, and the others refused when called", async () => {
    for (const value of ["true", "TRUE", "1", "yes", "On"]) {
      expect({ value, tools: namesOf(await listed(org.adminKey.secret, `?readonly=${value}`)) }).toEqual({ value, tools: readOnly });
    }
    expect(namesOf(await listed(org.adminKey.secret, "?readonly=off"))).toEqual(namesOf(registry));
    const client = await mcpClient(server, org.adminKey.secret, "tool-list", "?readonly=YES");
    try {
      const refused = await client.callTool({ name: "buckets_create", arguments: { name: "read-only" } });
      expect(refused.isError).toBe(true);
      expect(toolError(refused.content)).toMatchObject({ code: "forbidden", message: expect.stringContaining("read-only") });
    } finally {
      await client.close();
    }
  });

  test("toolsets narrows to the sets named; default is the set of everyday work; repeated, they add up", async () => {
    expect(namesOf(await listed(org.adminKey.secret, "?toolsets=default"))).toEqual(namesOf(selectTools(registry, DEFAULT_SELECTION)));
    const webhooksAndUsage = namesOf(registry.filter((t) => t.name.startsWith("webhooks_") || t.name.startsWith("usage_")));
    expect(namesOf(await listed(org.adminKey.secret, "?toolsets=webhooks&toolsets=usage"))).toEqual(webhooksAndUsage);
    expect(namesOf(await listed(org.adminKey.secret, "?toolsets=webhooks,usage"))).toEqual(webhooksAndUsage);
    expect(namesOf(await listed(org.adminKey.secret, "?toolsets=webhooks&readonly=true"))).toEqual(["webhooks_list", "webhooks_get", "webhooks_deliveries_list"]);
  });

  test("a value that could widen or is a guess is a 400 naming the parameter, not a silent choice", async () => {
    // readonly cannot widen: any value but an explicit false narrows (test/e2e/mcp-selection.test.ts).
    const cases: [string, "toolsets", string][] = [
      ["?toolsets=", "toolsets", "toolsets names no toolset"],
      ["?toolsets=,", "toolsets", "toolsets names no toolset"],
      ["?toolsets=media,nonsense", "toolsets", "Unknown toolset nonsense"],
      ["?toolsets=media&toolsets=nonsense", "toolsets", "Unknown toolset nonsense"],
    ];
    for (const [query, parameter, message] of cases) {
      const res = await rawList(query);
      const body = (await res.json()) as { error: { code: string; message: string; details: unknown; requestId: string } };
      expect({ query, status: res.status, code: body.error.code, details: body.error.details }).toEqual({ query, status: 400, code: "bad_request", details: [{ path: parameter, message: body.error.message }] });
      expect(body.error.message).toContain(message);
      expect(body.error.requestId).toEqual(expect.any(String));
    }
  });
});

describe("media_delete's annotations say what a repeat answers", () => {
  test("destructive and not idempotent: a second delete of the same object is not_found, and changes nothing more", async () => {
    const tools = await listed(org.adminKey.secret);
    expect(tools.find((t) => t.name === "media_delete")!.annotations).toMatchObject({ destructiveHint: true, idempotentHint: false });
    const bucket = await newBucket(org);
    const object = (await upload(org.admin, bucket.id, "twice.txt", "delete me twice")) as { id: string };
    const client = await mcpClient(server, org.adminKey.secret, "tool-list");
    try {
      const first = await client.callTool({ name: "media_delete", arguments: { id: object.id } });
      expect(first.isError).toBeFalsy();
      expect(first.structuredContent).toEqual({ id: object.id, deleted: true });
      const second = await client.callTool({ name: "media_delete", arguments: { id: object.id } });
      expect(second.isError).toBe(true);
      expect(toolError(second.content).code).toBe("not_found");
      // Nothing more happened: the object is in the trash once, and still restorable.
      const trash = await client.callTool({ name: "trash_list", arguments: { bucketId: bucket.id } });
      expect((trash.structuredContent as { data: { id: string }[] }).data.map((o) => o.id)).toEqual([object.id]);
      const restored = await client.callTool({ name: "trash_restore", arguments: { id: object.id } });
      expect(restored.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});
