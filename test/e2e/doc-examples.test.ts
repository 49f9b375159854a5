import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { type Block, blocksOf, documentationFiles, prepareShell, repositoryLines, root, where } from "../support/doc-examples.ts";
import { newOrg, startServer, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

// One pass: the examples are the pages' promises to a reader; the backends are tested elsewhere.

/**
 * Every example of the README and docs/ runs, as written, extracted from the Markdown
 * (the convention is in test/support/doc-examples.ts and docs/conventions.md). Each page's shell
 * blocks run in order, in one sandbox directory, as one session: what a block exports or
 * assigns, the next one sees. The harness provides what the pages assume a reader has:
 *
 * - `KEY`: an admin API key's secret (of an organization made for the page);
 * - `BUCKET`, `ID`: a bucket ("samples") and a JPEG in it;
 * - `MEDIA_URL` and `MEDIA_API_KEY` for the `media` command, which is on PATH;
 * - `DATA_DIR`: the service's (its embedded storage node's credential is there);
 * - files: beach.jpg, photo.jpg, film.mov, shoot/ (two JPEGs), key.txt (the key);
 * - curl fails on an HTTP error (`fail-with-body` in the sandbox's .curlrc), so an example
 *   whose request is refused fails here rather than printing an error nobody reads.
 */
let server: TestServer;
const work = mkdtempSync(join(tmpdir(), "media-doc-examples-"));
const bin = join(work, "bin");

beforeAll(async () => {
  server = await startServer();
  mkdirSync(bin);
  // `media` as a user's shell finds it after `npm link` or installing the binary.
  writeFileSync(join(bin, "media"), `#!/bin/sh\nexec "${process.execPath}" "${join(root, "cli/main.ts")}" "$@"\n`);
  chmodSync(join(bin, "media"), 0o755);
}, 120_000);
afterAll(async () => {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function jpeg(color: string): Promise<Buffer> {
  return sharp({ create: { width: 320, height: 240, channels: 3, background: color } }).jpeg().toBuffer();
}

/** A sandbox for one page: the files and variables its examples assume. */
async function sandboxFor(file: string): Promise<{ dir: string; state: string }> {
  const dir = join(work, file.replace(/[/.]/g, "_"));
  mkdirSync(join(dir, "shoot"), { recursive: true });
  mkdirSync(join(dir, ".config"));
  const org = await newOrg(server, `examples of ${file}`);
  const samples = (await org.admin.post("/api/buckets", { name: "samples" })).body;
  const photo = await jpeg("#2a6");
  const object = await upload(org.admin, samples.id, "sample.jpg", photo);
  writeFileSync(join(dir, "beach.jpg"), await jpeg("#38c"));
  writeFileSync(join(dir, "photo.jpg"), photo);
  writeFileSync(join(dir, "shoot/one.jpg"), await jpeg("#c83"));
  writeFileSync(join(dir, "shoot/two.jpg"), await jpeg("#83c"));
  writeFileSync(join(dir, "film.mov"), new Uint8Array(200_000).fill(1));
  writeFileSync(join(dir, "key.txt"), `${org.adminKey.secret}\n`);
  writeFileSync(join(dir, ".curlrc"), "fail-with-body\nshow-error\n");
  const vars: Record<string, string> = {
    KEY: org.adminKey.secret,
    BUCKET: samples.id,
    ID: object.id,
    MEDIA_URL: server.url,
    MEDIA_API_KEY: org.adminKey.secret,
    DATA_DIR: server.config.dataDir,
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, ".config"),
    PATH: `${bin}:${process.env.PATH}`,
    // npx asks the registry whether npm is current; the examples need nothing from it.
    npm_config_update_notifier: "false",
  };
  const state = join(dir, ".state.sh");
  writeFileSync(state, Object.entries(vars).map(([k, v]) => `export ${k}=${JSON.stringify(v)}`).join("\n"));
  return { dir, state };
}

async function runShell(block: Block, sandbox: { dir: string; state: string }, index: number): Promise<{ code: number; out: string }> {
  const script = join(sandbox.dir, `.block-${index}.sh`);
  writeFileSync(script, `${prepareShell(block.code, server.url, server.services.backends.storage.replace(/^embedded at /, ""))}\n`);
  const cwd = block.kind === "checkout" ? root : sandbox.dir;
  const session = [`set -euo pipefail`, `set -a`, `source "${sandbox.state}"`, `cd "${cwd}"`, `source "${script}"`, `export -p > "${sandbox.state}"`].join("\n");
  const proc = Bun.spawn(["bash", "--noprofile", "--norc", "-c", session], {
    env: { PATH: process.env.PATH ?? "", LANG: "C.UTF-8" },
    stdout: "pipe",
    stderr: "pipe",
    timeout: 120_000,
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code: await proc.exited, out: `${out}\n--- stderr ---\n${err}`.slice(-4000) };
}

const files = documentationFiles();
const allBlocks = files.flatMap(blocksOf);

describe("every example in the documentation", () => {
  test("every block says what it is (run, checkout, norun, json, yaml, ts excerpt, text)", () => {
    const unknown = allBlocks.filter((b) => b.kind === null).map((b) => `${where(b)}: \`\`\`${b.info}`);
    expect(unknown).toEqual([]);
  });

  test("JSON and YAML examples parse", () => {
    const broken: string[] = [];
    for (const b of allBlocks) {
      const text = b.code.replaceAll("…", "");
      try {
        if (b.kind === "json") {
          try {
            JSON.parse(text);
          } catch {
            JSON.parse(`{${text}}`);
          }
        } else if (b.kind === "yaml") Bun.YAML.parse(text);
      } catch (err) {
        broken.push(`${where(b)}: ${(err as Error).message}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test("code quoted from the repository is still there, line for line", () => {
    const lines = repositoryLines();
    const stale: string[] = [];
    for (const b of allBlocks.filter((x) => x.kind === "excerpt")) {
      for (const line of b.code.split("\n").map((l) => l.trim())) {
        if (line && !line.includes("...") && !lines.has(line)) stale.push(`${where(b)}: ${line}`);
      }
    }
    expect(stale).toEqual([]);
  });
});

for (const file of files) {
  const blocks = blocksOf(file).filter((b) => b.kind === "run" || b.kind === "checkout");
  if (blocks.length === 0) continue;
  describe(`${file}, run as written`, () => {
    let sandbox: { dir: string; state: string };
    beforeAll(async () => void (sandbox = await sandboxFor(file)), 60_000);
    for (const [i, block] of blocks.entries()) {
      test(`${where(block)}`, async () => {
        const { code, out } = await runShell(block, sandbox, i);
        expect({ block: where(block), code, out: code === 0 ? "" : out }).toEqual({ block: where(block), code: 0, out: "" });
      }, 150_000);
    }
  });
}
