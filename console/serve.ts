import type { Deps } from "../domain/core/deps.ts";
import type { ConsoleBundle } from "./build.ts";

/**
 * The web console at /console: one HTML page for every /console/* path (the app routes in
 * the browser) and its content-addressed assets. Everything comes from this process; the
 * page's policy allows scripts and styles from here only, and connections to here and to
 * storage (uploads and downloads go straight there with presigned URLs).
 */
let building: Promise<ConsoleBundle> | undefined;

/** Starts the build (once per process); the first page view waits for it. */
export function consoleBundle(): Promise<ConsoleBundle> {
  if (!building) {
    building = import("./build.ts").then((m) => m.buildConsole());
    // A failed build is retried on the next request rather than cached.
    building.catch(() => (building = undefined));
  }
  return building;
}

export function consoleCsp(storageOrigin: string | null): string {
  const storage = storageOrigin ? ` ${storageOrigin}` : "";
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' blob: data:${storage}`,
    `media-src 'self' blob:${storage}`,
    `connect-src 'self'${storage}`,
    "manifest-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** Where browsers reach storage: the origin of the URLs the service signs (S3_PUBLIC_ENDPOINT or the endpoint). */
function storageOriginOf(deps: Deps): string | null {
  try {
    return new URL(deps.storage.presignGet("console-origin-probe", { expiresIn: 60, now: deps.clock.now() })).origin;
  } catch {
    return null;
  }
}

function page(bundle: ConsoleBundle): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Media console</title>
<link rel="icon" href="/console/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/${bundle.stylesheet}">
<script type="module" src="/console/assets/${bundle.script}"></script>
</head>
<body>
<div id="app"><p class="boot">Loading the console…</p></div>
<noscript>The console needs JavaScript. The API is at /api and its reference at /api/docs.</noscript>
</body>
</html>`;
}

export function consoleRoutes(deps: Deps) {
  let csp: string | undefined;
  return {
    async page(): Promise<Response> {
      const bundle = await consoleBundle();
      csp ??= consoleCsp(storageOriginOf(deps));
      return new Response(page(bundle), {
        headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": csp, "cache-control": "no-cache" },
      });
    },
    async asset(request: Request, name: string): Promise<Response | null> {
      const bundle = await consoleBundle();
      const file = bundle.files.get(name);
      if (!file) return null;
      const gzip = /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
      const headers: Record<string, string> = {
        "content-type": file.type,
        // Names carry their content hash (the icon excepted), so they never change meaning.
        "cache-control": name === "icon.svg" ? "public, max-age=86400" : "public, max-age=31536000, immutable",
        vary: "accept-encoding",
      };
      if (gzip) headers["content-encoding"] = "gzip";
      return new Response(gzip ? file.gzip : file.body, { headers });
    },
  };
}
