import { dirname, join } from "node:path";
import { docsCsp } from "../http/security-headers.ts";

// Scalar's standalone bundle is served from node_modules: no CDN, so the docs work offline.
// The package exports no path to it, so it is found beside the package's entry point.
const scalarBundle = join(dirname(Bun.resolveSync("@scalar/api-reference", import.meta.dir)), "browser", "standalone.js");

const inlineScript = `
    // withDefaultFonts: false keeps the page from reaching fonts.scalar.com.
    Scalar.createApiReference("#app", { url: "/api/openapi.json", withDefaultFonts: false, hideClientButton: false });
  `;
const inlineScriptHash = `sha256-${new Bun.CryptoHasher("sha256").update(inlineScript).digest("base64")}`;

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>Media Storage API</title>
</head>
<body>
  <div id="app"></div>
  <script src="/api/docs/scalar.js"></script>
  <script>${inlineScript}</script>
</body>
</html>`;

export function docsPage(): Response {
  return new Response(page, { headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": docsCsp(inlineScriptHash) } });
}

export function docsScript(): Response {
  return new Response(Bun.file(scalarBundle), {
    headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
  });
}
