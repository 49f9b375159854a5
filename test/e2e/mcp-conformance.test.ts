import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { withServerAndOrg } from "../support/fixtures.ts";
import { png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

// One pass: the protocol's conformance does not depend on the database or the queue behind the tools.

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance) against /mcp. The suite
 * cannot send a credential, so the test puts a proxy in front that adds the bearer and passes
 * everything else through unchanged (Host and Origin too, for the DNS-rebinding scenario). It
 * runs under Bun: on Node 20 it needs fs.globSync, which Node 20 lacks.
 *
 * Scenarios that need the suite's own test tools, prompts or resources (`test_simple_text`,
 * `test_prompt_with_image`, `test://static-text`...) or features a stateless server does not
 * offer (sessions for SSE polling and several streams, resource subscriptions, sampling and
 * elicitation, which need the server to call the client back) cannot apply: APPLIES lists those
 * that do, and each must pass. docs/mcp.md lists the others and why.
 */
const APPLIES = [
  "server-initialize",
  "ping",
  "tools-list",
  "tools-call-error",
  "logging-set-level",
  "completion-complete",
  "resources-list",
  "dns-rebinding-protection",
];

function conformanceCli(): string | null {
  const dirs = [process.env.MCP_CONFORMANCE_DIR, join(import.meta.dir, "../../node_modules")].filter(Boolean) as string[];
  for (const dir of dirs) {
    const cli = join(dir, "@modelcontextprotocol/conformance/dist/index.js");
    if (existsSync(cli)) return cli;
  }
  return null;
}

setDefaultTimeout(240_000);
let server: TestServer;
let org: TestOrg;
withServerAndOrg({
  ready: async (made) => {
    ({ server, org } = made);
    const bucket = await newBucket(org, "conf");
    await upload(org.admin, bucket.id, "pictures/a.png", await png(32, 32));
  },
});

const cli = conformanceCli();

test.skipIf(!cli)("the conformance suite's scenarios that apply to this server pass", async () => {
  // The auth shim: adds the bearer, keeps every other header as sent.
  const target = new URL(server.url);
  const proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const headers = new Headers(request.headers);
      headers.set("authorization", `Bearer ${org.adminKey.secret}`);
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
      const answer = await fetch(`${target.origin}${url.pathname}${url.search}`, { method: request.method, headers, body, redirect: "manual" });
      return new Response(answer.body, { status: answer.status, headers: answer.headers });
    },
  });
  const out = mkdtempSync(join(tmpdir(), "mcp-conformance-"));
  if (process.env.MCP_CONFORMANCE_ALL) APPLIES.splice(0, APPLIES.length, ...process.env.MCP_CONFORMANCE_ALL.split(","));
  try {
    const results: Record<string, { passed: number; failed: string[] }> = {};
    for (const scenario of APPLIES) {
      const run = Bun.spawn([process.execPath, cli!, "server", "--url", `http://localhost:${proxy.port}/mcp`, "--scenario", scenario, "-o", join(out, scenario)], {
        cwd: dirname(cli!),
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
      const found = findChecks(join(out, scenario));
      const checks = found ? (JSON.parse(readFileSync(found, "utf8")) as { id: string; status: string; errorMessage?: string }[]) : [];
      results[scenario] = {
        passed: checks.filter((c) => c.status === "SUCCESS").length,
        failed: checks.filter((c) => c.status === "FAILURE").map((c) => `${c.id}: ${c.errorMessage ?? ""}`),
      };
      if (!found) results[scenario]!.failed.push(`no checks.json: ${stdout.slice(-500)}`);
    }
    console.log(JSON.stringify(results, null, 2));
    const failures = Object.entries(results).flatMap(([s, r]) => r.failed.map((f) => `${s} ${f}`));
    expect(failures).toEqual([]);
    for (const scenario of APPLIES) expect(results[scenario]!.passed).toBeGreaterThan(0);
  } finally {
    proxy.stop(true);
    rmSync(out, { recursive: true, force: true });
  }
});

function findChecks(dir: string): string | null {
  if (!existsSync(dir)) return null;
  for (const entry of readdirSync(dir, { recursive: true }) as string[]) if (entry.endsWith("checks.json")) return join(dir, entry);
  return null;
}

test.skipIf(cli !== null)("the conformance suite is installed (npm install -D @modelcontextprotocol/conformance@0.1.16)", () => {
  console.warn("@modelcontextprotocol/conformance is not installed: the conformance scenarios did not run");
});
