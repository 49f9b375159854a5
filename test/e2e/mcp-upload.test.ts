import { expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { toolError } from "../support/mcp-results.ts";

let server: TestServer;
let org: TestOrg;
let client: Client;

withServerAndOrg({
  ready: async (made) => {
    ({ server, org } = made);
    client = await mcpClient(server, org.adminKey.secret, "agent");
  },
  cleanup: () => client?.close(),
});

type Structured<T> = { structuredContent: T; isError?: boolean };
const call = async <T = any>(name: string, args: Record<string, unknown>) => {
  const result = (await client.callTool({ name, arguments: args })) as Structured<T>;
  expect(result.isError).toBeFalsy();
  return result.structuredContent;
};

test("an agent uploads without bytes in any tool argument: presign, PUT, confirm, then download", async () => {
  const { tools } = await client.listTools();
  const presign = tools.find((t) => t.name === "presign_upload")!;
  // The descriptions tell the agent the whole flow.
  expect(presign.description).toContain("PUT");
  expect(presign.description).toContain("presign_confirm");
  expect(JSON.stringify(presign.inputSchema)).not.toMatch(/"(data|bytes|content|base64)"/);

  const bucket = await call("buckets_create", { name: "agent-files" });
  const signed = await call("presign_upload", { bucketId: bucket.id, key: "notes/hello.txt", contentType: "text/plain", size: 11 });
  const put = await fetch(signed.url, { method: "PUT", headers: signed.headers, body: "hello agent" });
  expect(put.status).toBe(200);
  const obj = await call("presign_confirm", { bucketId: bucket.id, key: "notes/hello.txt" });
  expect(obj).toMatchObject({ key: "notes/hello.txt", size: 11, kind: "other", contentType: "text/plain" });
  const dl = await call("presign_download", { objectId: obj.id, expiresIn: 120 });
  expect(await (await fetch(dl.url)).text()).toBe("hello agent");
  const streamed = await call("media_stream", { id: obj.id });
  expect(await (await fetch(streamed.url)).text()).toBe("hello agent");
  const listed = await call("media_list", { bucketId: bucket.id });
  expect(listed.total).toBe(1);
});

test("a tool refusing over quota carries the code", async () => {
  const bucket = await call("buckets_create", { name: "agent-quota" });
  const result = await client.callTool({ name: "presign_upload", arguments: { bucketId: bucket.id, key: "huge.bin", size: 5 * 1024 ** 4 } });
  expect(result.isError).toBe(true);
  expect(toolError(result.content).code).toBe("quota_exceeded");
});
