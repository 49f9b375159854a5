/**
 * `npm run bench -- cli-start`: how long `media` takes to start, three ways of installing it
 * (docs/cli.md#install): `npx media` in the checkout, `media` after `npm link` (cli/bin/media,
 * the checkout's Bun running cli/main.ts) and the compiled binary (`npm run build:cli`). Each
 * runs `--version` (start-up alone) and `buckets list --json` (start-up and one request to a
 * local service), measured by hyperfine. Writes bench/results/cli-start.md (BENCH_NO_WRITE=1 leaves it).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newOrg, startServer } from "../test/support/server.ts";
import { load1, writeSection } from "./_load.ts";

const root = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "media-bench-cli-"));

async function sh(cmd: string[], env: Record<string, string | undefined> = process.env): Promise<string> {
  const proc = Bun.spawn(cmd, { cwd: root, env, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if ((await proc.exited) !== 0) throw new Error(`${cmd.join(" ")}: ${err || out}`);
  return out;
}

const server = await startServer({ embedded: true });
try {
  const org = await newOrg(server);
  const binary = join(work, "media");
  await sh([process.execPath, "build", "--compile", join(root, "cli/main.ts"), "--outfile", binary]);
  const prefix = join(work, "prefix");
  await sh(["npm", "link"], { ...process.env, npm_config_prefix: prefix });
  const env = { ...process.env, MEDIA_URL: server.url, MEDIA_API_KEY: org.adminKey.secret, PATH: `${prefix}/bin:${process.env.PATH}` };
  const ways = { "npx media": "npx media", "npm link": "media", "compiled binary": binary };
  const rows: string[] = [];
  for (const args of ["--version", "buckets list --json"]) {
    const json = join(work, "hyperfine.json");
    const before = load1();
    await sh(["hyperfine", "-N", "--warmup", "3", "--runs", "20", "--export-json", json, ...Object.values(ways).map((w) => `${w} ${args}`)], env);
    const after = load1();
    const results = JSON.parse(readFileSync(json, "utf8")).results as { mean: number; stddev: number; min: number; user: number }[];
    Object.keys(ways).forEach((way, i) => {
      const r = results[i]!;
      rows.push(`| \`${args}\` | ${way} | ${(r.mean * 1000).toFixed(0)} ± ${(r.stddev * 1000).toFixed(0)} | ${(r.min * 1000).toFixed(0)} | ${(r.user * 1000).toFixed(0)} | ${before}-${after} |`);
    });
  }
  console.log(rows.join("\n"));
  if (!process.env.BENCH_NO_WRITE) writeSection(
    "cli-start",
    `## cli-start — how long \`media\` takes to start

\`npm run bench -- cli-start\`, ${new Date().toISOString().slice(0, 10)}, Bun ${Bun.version}, hyperfine, 20 runs after 3 warm-ups each, against
an embedded service on this machine. Times in ms; user CPU is the steadier figure on this shared machine.

| command | installed as | mean | min | user CPU | load (1 min) |
|---|---|---:|---:|---:|---:|
${rows.join("\n")}

\`npx\` resolves the package and starts npm (a Node process) before Bun: most of its time is npm's.
\`npm link\` puts cli/bin/media on PATH, which runs the checkout's Bun on cli/main.ts (Bun
transpiles the TypeScript at each start). The compiled binary carries Bun and the bundled CLI (about
110 MB) and starts fastest.
`,
  );
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
process.exit(0);
