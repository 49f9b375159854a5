import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { CLI, cliEnv, removeTempConfigHomes } from "../support/cli.ts";
import { eventually } from "../support/eventually.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
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

withServerAndOrg({ ready: (made) => void ({ server, org } = made), cleanup: removeTempConfigHomes });

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

describe("through media mcp", () => {
  test("the bridge relays log notices of a plain call and the progress steps", async () => {
    const client = new Client({ name: "desktop-agent", version: "1" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp"], env: cliEnv({ url: server.url, key: org.adminKey.secret }), stderr: "pipe" }));
    try {
      const logs = collectLogs(client);
      await client.callTool({ name: "me_get", arguments: {} });
      await eventually(async () => (logs.length >= 3 ? logs : undefined), { what: "three log notices through the bridge" });
      expect(logs.map((l) => l.data.tool)).toEqual(["me_get", "me_get", "me_get"]);
      const progress: number[] = [];
      await client.request({ method: "tools/call", params: { name: "me_get", arguments: {} } }, CallToolResultSchema, { onprogress: (p) => void progress.push(p.progress) });
      expect(progress.length).toBeGreaterThanOrEqual(3);
    } finally {
      await client.close();
    }
  });
});
