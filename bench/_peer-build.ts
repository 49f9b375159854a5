/**
 * Builds Supabase Storage (github.com/supabase/storage) from source in a temporary directory
 * for bench/peer.ts, never in this repository:
 *   - cloned from BENCH_PEER_GIT (default its GitHub URL; a local mirror path works too) at
 *     BENCH_PEER_REF (default: the default branch's head);
 *   - its `pg-boss` git dependency (a fork on GitHub) swapped for the npm release the lock
 *     file names (10.3.2), since git dependencies need GitHub access at install time;
 *   - installed and built with Node 24 and npm 11 from npm (`npx -p node@24`), which its
 *     package.json requires (engines: node >= 24), whatever Node the machine has;
 *   - install scripts skipped except the one native module it loads (fs-xattr), rebuilt.
 * BENCH_PEER_DIR names an existing build to reuse (then nothing is cloned or removed).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PEER_GIT = process.env.BENCH_PEER_GIT ?? "https://github.com/supabase/storage.git";
const PG_BOSS = "10.3.2";

function run(cmd: string[], cwd: string, what: string): string {
  process.stderr.write(`[peer] ${what}\n`);
  const r = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, npm_config_yes: "true" } });
  if (r.exitCode !== 0) throw new Error(`${what} failed (${cmd.join(" ")}):\n${r.stderr.toString().slice(-3000)}`);
  return r.stdout.toString();
}

const NODE = ["npx", "-y", "-p", "node@24", "-p", "npm@11", "--"];

export interface PeerBuild {
  /** The checkout, with dist/ built. */
  src: string;
  /** Node 24's binary, to start the server as a direct child (its pid is the server's). */
  node: string;
  commit: string;
  /** Removes the temporary directory (unless BENCH_PEER_DIR was given). */
  remove(): void;
}

export function buildPeer(): PeerBuild {
  const given = process.env.BENCH_PEER_DIR;
  const root = given ?? mkdtempSync(join(tmpdir(), "media-peer-storage-"));
  const src = given ? root : join(root, "src");
  const node = run([...NODE, "node", "-p", "process.execPath"], tmpdir(), "finding Node 24 from npm").trim();
  if (!given || !existsSync(join(src, "dist/start/server.js"))) {
    if (!given) {
      const remote = /^[a-z]+:\/\//.test(PEER_GIT);
      run(["git", "clone", "--quiet", ...(remote && !process.env.BENCH_PEER_REF ? ["--depth", "1"] : []), PEER_GIT, src], root, `cloning ${PEER_GIT}`);
      if (process.env.BENCH_PEER_REF) run(["git", "checkout", "--quiet", process.env.BENCH_PEER_REF], src, `checking out ${process.env.BENCH_PEER_REF}`);
    }
    const pkg = JSON.parse(readFileSync(join(src, "package.json"), "utf8"));
    if (String(pkg.dependencies?.["pg-boss"] ?? "").includes("github:")) {
      pkg.dependencies["pg-boss"] = PG_BOSS;
      writeFileSync(join(src, "package.json"), JSON.stringify(pkg, null, 2));
      const lock = JSON.parse(readFileSync(join(src, "package-lock.json"), "utf8"));
      lock.packages[""].dependencies["pg-boss"] = PG_BOSS;
      delete lock.packages["node_modules/pg-boss"];
      writeFileSync(join(src, "package-lock.json"), JSON.stringify(lock, null, 2));
    }
    run([...NODE, "npm", "install", "--no-audit", "--no-fund", "--ignore-scripts"], src, "npm install (Node 24, about a minute)");
    run([...NODE, "npm", "rebuild", "fs-xattr"], src, "building fs-xattr");
    // Its `npm run build` also type-checks (tsc --noEmit, minutes here); the output is esbuild's alone.
    run([node, "build.js"], src, "esbuild");
    run([node, join(src, "node_modules/.bin/resolve-tspaths")], src, "resolve-tspaths");
  }
  const commit = run(["git", "rev-parse", "--short", "HEAD"], src, "reading the commit").trim();
  return {
    src,
    node,
    commit,
    remove() {
      if (!given) rmSync(root, { recursive: true, force: true });
    },
  };
}
