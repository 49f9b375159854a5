import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { withServerAndOrg } from "../support/fixtures.ts";
import type { TestServer } from "../support/server.ts";

// One pass: the served OpenAPI document is built from the registry, whatever the backends.

/**
 * The served OpenAPI document through the third-party tools integrators use: Redocly's
 * recommended ruleset, and openapi-typescript, whose output must compile with named types for
 * every resource and list.
 */
const root = join(import.meta.dir, "../..");
let server: TestServer;
let dir: string;
let doc: any;

withServerAndOrg({
  ready: async (made) => {
    server = made.server;
    dir = mkdtempSync(join(tmpdir(), "media-openapi-"));
    doc = await fetch(`${server.url}/api/openapi.json`).then((r) => r.json());
    writeFileSync(join(dir, "openapi.json"), JSON.stringify(doc, null, 2));
  },
  cleanup: () => rmSync(dir, { recursive: true, force: true }),
});

async function run(cmd: string[], cwd = dir): Promise<{ code: number; out: string }> {
  const proc = Bun.spawn(cmd, {
    cwd,
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code: await proc.exited, out: out + err };
}

describe("the OpenAPI document, as integrators' tools see it", () => {
  test("servers names where this service answered, tags are described, every operation but the stream has a 2xx", () => {
    expect(doc.servers).toEqual([{ url: server.url, description: "This service" }]);
    for (const tag of doc.tags) expect({ tag: tag.name, described: tag.description.length > 20 }).toEqual({ tag: tag.name, described: true });
    for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const op of Object.values(methods)) {
        const success = Object.keys(op.responses).filter((s) => /^[23]/.test(s));
        if (op.operationId === "media_stream") expect(success).toEqual(["302"]);
        else expect({ path, has2xx: success.some((s) => s.startsWith("2")) }).toEqual({ path, has2xx: true });
      }
    }
    expect(doc.paths["/api/payments/webhook"].post).toMatchObject({ operationId: "payments_webhook", security: [] });
    expect(doc.paths["/api/render/{id}"].get).toMatchObject({ operationId: "media_render_signed", security: [] });
  });

  test("Redocly's recommended rules: no error, no warning the config does not justify", async () => {
    const { code, out } = await run([join(root, "node_modules/.bin/redocly"), "lint", "openapi.json", `--config=${join(root, "openapi/redocly.yaml")}`, "--format=json"]);
    const report = JSON.parse(out.slice(out.indexOf("{"), out.lastIndexOf("}") + 1));
    const problems = report.problems.map((p: any) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(code).toBe(0);
  }, 60_000);

  test("openapi-typescript generates named types for every resource and list, and a client using them compiles", async () => {
    const generator = join(root, "test/clients/node_modules/openapi-typescript/bin/cli.js");
    const gen = await run(["node", generator, "openapi.json", "-o", "api.d.ts", "--root-types", "--root-types-no-schema-prefix"]);
    expect(gen.code).toBe(0);
    const types = readFileSync(join(dir, "api.d.ts"), "utf8");
    const named = [...types.matchAll(/^export type (\w+) = components\['schemas'\]/gm)].map((m) => m[1]);
    for (const name of ["MediaObject", "MediaObjectList", "Bucket", "BucketList", "ApiKey", "ApiKeyList", "ApiKeyWithSecret", "Tag", "TagList"]) expect(named).toContain(name);
    for (const name of ["Category", "CategoryNodeList", "MediaSet", "SetSummaryList", "Storyboard", "StoryboardSummaryList", "Clip", "SearchResult"]) expect(named).toContain(name);
    for (const name of ["PresignedUpload", "PresignedDownload", "UsageSummary", "UsageEventList", "InvoiceList", "Deleted", "ErrorEnvelope"]) expect(named).toContain(name);
    // Every success answer of a tool is a named type: a generated client never meets an anonymous shape.
    for (const methods of Object.values<Record<string, any>>(doc.paths)) {
      for (const op of Object.values(methods)) {
        const json = Object.entries<any>(op.responses).find(([s]) => s.startsWith("2"))?.[1]?.content?.["application/json"];
        if (json && op.operationId !== "payments_webhook") expect({ op: op.operationId, ref: typeof json.schema.$ref }).toEqual({ op: op.operationId, ref: "string" });
      }
    }
    writeFileSync(
      join(dir, "client.ts"),
      `import type { paths, MediaObject, MediaObjectList, Bucket, BucketList, ErrorEnvelope, PresignedUpload } from "./api";
type Json<P extends keyof paths, M extends keyof paths[P], S extends number> =
  paths[P][M] extends { responses: { [K in S]: { content: { "application/json": infer T } } } } ? T : never;
const bucket: Bucket = { id: "00000000-0000-4000-8000-000000000000", name: "photos", createdAt: "2026-01-01T00:00:00Z" };
const buckets: Json<"/api/buckets", "get", 200> = { data: [bucket], total: 1, hasMore: false } satisfies BucketList;
const page: MediaObjectList = { data: [] as MediaObject[], total: 0, hasMore: false };
const upload: Json<"/api/presign/upload", "post", 200> = {} as PresignedUpload;
const headers: Record<string, string> = upload.headers;
const failure: ErrorEnvelope["error"]["code"] = "not_found";
// A nullable reference keeps its null: the thumbnail may be missing.
const thumbnail: MediaObject["thumbnail"] = null;
export { buckets, page, headers, failure, thumbnail };
`,
    );
    const tsc = await run([join(root, "node_modules/.bin/tsc"), "--noEmit", "--strict", "--skipLibCheck", "false", "--target", "es2022", "--module", "preserve", "client.ts"]);
    expect(tsc.out).toBe("");
    expect(tsc.code).toBe(0);
  }, 60_000);
});
