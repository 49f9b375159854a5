import { join } from "node:path";
import type { BunPlugin } from "bun";

/**
 * The console's bundle, built with Bun's bundler from console/app when the server first
 * serves it (so `npm install && npm start` needs no build step). `console:tools` is a module
 * made here from the registry: every tool's name, route, scope, reach, annotations and
 * JSON schemas, so the browser places requests exactly as the server reads them.
 */
export interface ConsoleBundle {
  /** Content-addressed names, so the files can be cached for good. */
  files: Map<string, { body: Uint8Array<ArrayBuffer>; gzip: Uint8Array<ArrayBuffer>; type: string }>;
  script: string;
  stylesheet: string;
}

const APP_DIR = join(import.meta.dir, "app");

// Two modules from the registry: the routes every page needs (small, in the main bundle) and
// the full descriptions with JSON schemas, loaded only by the tool explorer.
const registryModules: BunPlugin = {
  name: "console-registry",
  setup(build) {
    build.onResolve({ filter: /^console:(routes|tools)$/ }, (args) => ({ path: args.path, namespace: "console-registry" }));
    build.onLoad({ filter: /.*/, namespace: "console-registry" }, async (args) => {
      const { registryMeta, routeOf } = await import("./tool-meta.ts");
      const meta = registryMeta();
      const data = args.path === "console:routes" ? meta.map(routeOf) : meta;
      return { contents: `export default ${JSON.stringify(data)};`, loader: "js" };
    });
  },
};

function hashed(name: string, ext: string, body: Uint8Array): string {
  const digest = new Bun.CryptoHasher("sha256").update(body).digest("hex").slice(0, 12);
  return `${name}-${digest}.${ext}`;
}

export async function buildConsole(): Promise<ConsoleBundle> {
  // pdf.js's worker, served from here as it is (the viewer's PDF pages); the app learns its name.
  const pdfWorker = new Uint8Array(await Bun.file(Bun.resolveSync("pdfjs-dist/build/pdf.worker.min.mjs", import.meta.dir)).arrayBuffer());
  const pdfWorkerName = hashed("pdf.worker", "mjs", pdfWorker);
  const result = await Bun.build({
    entrypoints: [join(APP_DIR, "main.tsx")],
    target: "browser",
    format: "esm",
    splitting: true,
    minify: true,
    sourcemap: "none",
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    plugins: [registryModules],
    define: { "process.env.NODE_ENV": '"production"', PDF_WORKER: JSON.stringify(pdfWorkerName) },
  });
  if (!result.success) throw new AggregateError(result.logs, "console build failed");
  const files: ConsoleBundle["files"] = new Map();
  const add = (name: string, body: Uint8Array<ArrayBuffer>, type: string) => files.set(name, { body, gzip: Bun.gzipSync(body, { level: 9 }) as Uint8Array<ArrayBuffer>, type });
  let script = "";
  for (const output of result.outputs) {
    const name = output.path.replace(/^.*\//, "");
    add(name, new Uint8Array(await output.arrayBuffer()), "text/javascript; charset=utf-8");
    if (output.kind === "entry-point") script = name;
  }
  if (!script) throw new Error("console build produced no entry point");
  const css = new Uint8Array(await Bun.file(join(APP_DIR, "styles.css")).arrayBuffer());
  const stylesheet = hashed("styles", "css", css);
  add(stylesheet, css, "text/css; charset=utf-8");
  add("icon.svg", new TextEncoder().encode(ICON), "image/svg+xml");
  add(pdfWorkerName, pdfWorker, "text/javascript; charset=utf-8");
  return { files, script, stylesheet };
}

/**
 * What a first visit downloads (gzipped, as served): the entry script, the modules it loads
 * before the first page shows (its static imports and the app it imports at once, with theirs)
 * and the stylesheet. Chunks imported only later (the explorer's schemas, viewers) are the
 * rest, by the name of the module they come from ("tools" for the explorer).
 */
export function firstLoad(bundle: ConsoleBundle): { files: string[]; gzip: number; later: Record<string, number> } {
  const seen = new Set<string>();
  const text = (name: string) => new TextDecoder().decode(bundle.files.get(name)!.body);
  const visit = (name: string, withDynamic: boolean) => {
    if (seen.has(name) || !bundle.files.has(name)) return;
    seen.add(name);
    const body = text(name);
    for (const m of body.matchAll(/(?:from\s*|import\s*)"\.\/([^"]+\.js)"/g)) visit(m[1]!, false);
    // Only the entry's own dynamic import is unconditional (it starts the app).
    if (withDynamic) for (const m of body.matchAll(/import\("\.\/([^"]+\.js)"\)/g)) visit(m[1]!, false);
  };
  visit(bundle.script, true);
  seen.add(bundle.stylesheet);
  let gzip = 0;
  const later: Record<string, number> = {};
  for (const [name, f] of bundle.files) {
    if (seen.has(name)) gzip += f.gzip.length;
    else if (name.endsWith(".js")) {
      const module = name.replace(/-[^-]+\.js$/, "");
      later[module] = (later[module] ?? 0) + f.gzip.length;
    }
  }
  return { files: [...seen], gzip, later };
}

const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#3b5bdb"/><path d="M7 22l6-8 5 6 3-4 4 6z" fill="#fff"/><circle cx="22" cy="10" r="3" fill="#ffd43b"/></svg>`;

// `bun console/build.ts`: build once and report the sizes (what the server would serve).
if (import.meta.main) {
  const started = performance.now();
  const bundle = await buildConsole();
  for (const [name, f] of bundle.files) console.log(`${name}  ${f.body.length} bytes, ${f.gzip.length} gzipped`);
  const first = firstLoad(bundle);
  console.log(`first load: ${first.gzip} bytes gzipped (${first.files.join(", ")}); loaded when needed: ${JSON.stringify(first.later)}`);
  console.log(`built in ${Math.round(performance.now() - started)} ms`);
}
