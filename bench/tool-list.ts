/**
 * `npm run bench -- tool-list`: what `tools/list` on the bare /mcp URL costs an agent, for each
 * kind of credential: the tools listed, the bytes a model reads (each tool's name, description
 * and input schema, as hosts pass them on) and the bytes of the whole result (with titles,
 * annotations and output schemas), tokens estimated at 4 bytes each. The listing is asked, with
 * the SDK's client over an in-memory transport, of the MCP server /mcp makes for a request
 * without parameters, so it is the one sent (test/e2e/mcp-tool-list.test.ts checks HTTP sends
 * the same). Runs in a second, without a database: listing reads nothing.
 * BENCH_NO_WRITE=1 prints the section and leaves bench/results/tool-list.md alone.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Caller } from "../domain/access/caller.ts";
import type { Deps } from "../domain/core/deps.ts";
import { createMcpServer } from "../mcp/server.ts";
import { registry } from "../tools/registry.ts";
import { parseSelection, TOOLSET_NAMES, type ToolSelection } from "../tools/toolsets.ts";
import { jsonBytes, LISTING_CREDENTIALS, MODEL_VIEW_BUDGET, modelView } from "../test/support/mcp-listing.ts";
import { writeSection } from "./_load.ts";

/** tools/list as a client receives it from the server for this credential and these parameters. */
async function list(credential: (typeof LISTING_CREDENTIALS)[string], selection?: ToolSelection): Promise<Tool[]> {
  const caller: Caller = { orgId: crypto.randomUUID(), userId: crypto.randomUUID(), apiKeyId: crypto.randomUUID(), principal: "bench", ...credential };
  // Listing touches no dependency; a call would, and none is made.
  const server = createMcpServer({} as Deps, caller, () => "bench", registry, null, ...(selection ? [selection] : []));
  const client = new Client({ name: "bench", version: "1" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
    await server.close();
  }
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const tokens = (n: number) => (n >= 4000 ? `~${(n / 4000).toFixed(1)}k` : `~${Math.round(n / 4)}`);
const row = (label: string, tools: Tool[]) => {
  const seen = jsonBytes(modelView(tools));
  const all = jsonBytes({ tools });
  return `| ${label} | ${tools.length} | ${seen.toLocaleString("en")} (${kb(seen)}, ${tokens(seen)} tokens) | ${all.toLocaleString("en")} (${kb(all)}, ${tokens(all)} tokens) |`;
};
const selection = (toolsets: string[], readonly: string[] = []) => {
  const s = parseSelection(toolsets, readonly);
  if ("error" in s) throw new Error(s.error);
  return s;
};

const lines = [
  `${new Date().toISOString().slice(0, 16)}Z; ${registry.length} tools in the registry.`,
  "",
  "The bare `/mcp` URL, per credential. \"A model reads\": each tool's name, description and input schema (the budget: an admin key's at most",
  `${MODEL_VIEW_BUDGET.toLocaleString("en")} bytes); "in all": the whole \`tools/list\` result, with titles, annotations and output schemas.`,
  "",
  "| credential | tools | bytes a model reads | bytes in all |",
  "|---|---:|---:|---:|",
];
for (const [name, credential] of Object.entries(LISTING_CREDENTIALS)) lines.push(row(name, await list(credential)));
const admin = LISTING_CREDENTIALS.admin!;
lines.push("", "Narrower choices, admin key:", "", "| parameters | tools | bytes a model reads | bytes in all |", "|---|---:|---:|---:|");
lines.push(row("`readonly=true`", await list(admin, selection([], ["true"]))));
lines.push(row("`toolsets=default`", await list(admin, selection(["default"]))));
for (const set of TOOLSET_NAMES) lines.push(row(`\`toolsets=${set}\``, await list(admin, selection([set]))));

const section = lines.join("\n");
console.log(section);
if (process.env.BENCH_NO_WRITE !== "1") {
  writeSection("tool-list", `## tool-list — what \`tools/list\` costs an agent (written by \`npm run bench -- tool-list\`)\n\n${section}`);
}
