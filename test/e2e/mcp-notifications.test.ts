import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { CLI, cliEnv, removeTempConfigHomes } from "../support/cli.ts";
import { eventually } from "../support/eventually.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import { png } from "../support/media-files.ts";
import { insertObject, newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";

/**
 * Log notifications reach any client library that reads an event stream, without a progress
 * token (what the conformance scenario tools-call-with-logging checks, here for real tools),
 * and a call with a progress token gets at least three increasing steps
 * (tools-call-with-progress). Through the SDK's client over HTTP and through `media mcp`.
 */
setDefaultTimeout(60_000);

let server: TestServer;
let org: TestOrg;

// A file server on loopback for media_import, which must be allowed to fetch from it.
let picture: Uint8Array<ArrayBuffer>;
const files = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(picture, { headers: { "content-type": "image/png" } }) });

withServerAndOrg({
  server: { env: { IMPORT_ALLOW_PRIVATE: "true" } },
  ready: async (made) => {
    ({ server, org } = made);
    picture = new Uint8Array(await png(64, 48));
  },
  cleanup: () => {
    files.stop(true);
    removeTempConfigHomes();
  },
});

type Log = { level: string; logger?: string; data: { tool: string; event?: string; ok?: boolean } };

function collectLogs(client: Client): Log[] {
  const logs: Log[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params as Log));
  return logs;
}

describe("log notifications without a progress token", () => {
  test("a plain tools/call of a real tool sends its start, its run and its end as info notices", async () => {
    const client = await mcpClient(server, org.adminKey.secret, "logging");
    try {
      const logs = collectLogs(client);
      const listed = await client.callTool({ name: "buckets_list", arguments: {} });
      expect(listed.isError).toBeFalsy();
      await eventually(async () => (logs.length >= 3 ? logs : undefined), { what: "three log notices" });
      expect(logs.map((l) => [l.level, l.data.tool, l.data.event ?? (l.data.ok ? "ok" : "failed")])).toEqual([
        ["info", "buckets_list", "started"],
        ["info", "buckets_list", "running"],
        ["info", "buckets_list", "ok"],
      ]);
      // A failed call ends with a warning.
      logs.length = 0;
      const missing = await client.callTool({ name: "buckets_get", arguments: { id: crypto.randomUUID() } });
      expect(missing.isError).toBe(true);
      await eventually(async () => (logs.length >= 3 ? logs : undefined), { what: "three log notices of the failed call" });
      expect(logs.at(-1)).toMatchObject({ level: "warning", data: { tool: "buckets_get", ok: false } });
    } finally {
      await client.close();
    }
  });

  test("a script that posts a call without MCP-Protocol-Version still gets one JSON body", async () => {
    const res = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.adminKey.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "me_get", arguments: {} } }),
    });
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(((await res.json()) as { result: { isError?: boolean } }).result.isError).toBeFalsy();
  });
});

describe("progress", () => {
  test("every call with a progress token gets at least three increasing steps before its result", async () => {
    const client = await mcpClient(server, org.adminKey.secret, "progress");
    try {
      for (const [name, args] of [["me_get", {}], ["buckets_create", { name: `progress-${crypto.randomUUID().slice(0, 8)}` }], ["buckets_get", { id: crypto.randomUUID() }]] as const) {
        const progress: { progress: number; total?: number; message?: string }[] = [];
        await client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, { onprogress: (p) => void progress.push(p) });
        expect({ name, count: progress.length >= 3 }).toEqual({ name, count: true });
        expect(progress.every((p, i) => i === 0 || p.progress > progress[i - 1]!.progress)).toBe(true);
        expect(progress.slice(0, 3).map((p) => p.message)).toEqual([`${name} started`, `${name} running`, `${name} answered`].slice(0, name === "buckets_get" ? 2 : 3).concat(name === "buckets_get" ? [`${name} failed`] : []));
      }
    } finally {
      await client.close();
    }
  });
});

describe("progress of long calls over HTTP", () => {
  type Step = { progress: number; total?: number; message?: string };

  /** A tools/call with a progress token: the steps that arrived before the result, and the result. */
  async function withSteps(name: string, args: Record<string, unknown>) {
    const client = await mcpClient(server, org.adminKey.secret, "long-calls");
    try {
      const steps: Step[] = [];
      const result = await client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, { onprogress: (p) => void steps.push(p) });
      return { steps, result };
    } finally {
      await client.close();
    }
  }

  /**
   * What every long call promises: three steps or more, each above the last, the tool's own
   * measure among them, and the last at its total (the end was reported, before the result).
   */
  function expectLongCallSteps(name: string, steps: Step[], ownTotal: number) {
    expect({ name, steps: steps.length >= 3 ? "3 or more" : steps }).toEqual({ name, steps: "3 or more" });
    expect(steps.every((p, i) => i === 0 || p.progress > steps[i - 1]!.progress)).toBe(true);
    expect(steps.some((p) => p.total === ownTotal && !p.message?.startsWith(name))).toBe(true);
    const last = steps.at(-1)!;
    expect(last.progress).toBe(last.total!);
  }

  test("media_import with wait: at least three steps, bytes among them, ending at the file's size", async () => {
    const bucket = await newBucket(org, "progress");
    const { steps, result } = await withSteps("media_import", { bucketId: bucket.id, key: "long/import.png", url: `http://127.0.0.1:${files.port}/p.png`, wait: true });
    expect(result.structuredContent).toMatchObject({ state: "stored", bytesReceived: picture.length });
    expectLongCallSteps("media_import", steps, picture.length);
  });

  test("sets_generate with wait: at least three steps, items settled among them, ending at all of them", async () => {
    const bucket = await newBucket(org, "progress");
    const base = await insertObject(server, org, bucket.id, { bytes: picture, contentType: "image/png" });
    const set = (await org.admin.post("/api/sets", { name: "progress", baseObjectId: base.id })).body;
    expect((await org.admin.post(`/api/sets/${set.id}/items`, { aspectRatio: "1:1", width: 32, height: 32, role: "square" })).status).toBe(201);
    const { steps, result } = await withSteps("sets_generate", { id: set.id, wait: true });
    expect(result.structuredContent).toMatchObject({ status: "settled", items: 1 });
    expectLongCallSteps("sets_generate", steps, 1);
  });
});

describe("through media mcp", () => {
  test("the bridge relays log notices of a plain call and the progress steps", async () => {
    const client = new Client({ name: "desktop-agent", version: "1" });
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp"], env: cliEnv({ url: server.url, key: org.adminKey.secret }), stderr: "pipe" });
    await client.connect(transport);
    // What the bridge writes, in its order. The SDK's client handles a notification a tick
    // after reading it and forgets a call's progress token at its result: on a loaded machine
    // it may read the last steps and the result in one chunk and drop those steps, however
    // the bridge spaces them. What the bridge owes is every step, before the result.
    const written: { method?: string; id?: unknown; params?: { progressToken?: unknown } }[] = [];
    const handle = transport.onmessage!;
    transport.onmessage = (message) => {
      written.push(message as (typeof written)[number]);
      handle(message);
    };
    try {
      const logs = collectLogs(client);
      await client.callTool({ name: "me_get", arguments: {} });
      await eventually(async () => (logs.length >= 3 ? logs : undefined), { what: "three log notices through the bridge" });
      expect(logs.map((l) => l.data.tool)).toEqual(["me_get", "me_get", "me_get"]);
      const progress: number[] = [];
      const from = written.length;
      await client.request({ method: "tools/call", params: { name: "me_get", arguments: {} } }, CallToolResultSchema, { onprogress: (p) => void progress.push(p.progress) });
      const call = written.slice(from);
      const answer = call.findIndex((m) => m.id !== undefined && m.method === undefined);
      const steps = call.filter((m, i) => m.method === "notifications/progress" && i < answer);
      expect(steps.length).toBeGreaterThanOrEqual(3);
      expect(call.filter((m) => m.method === "notifications/progress").length).toBe(steps.length);
    } finally {
      await client.close();
    }
  });
});
