import { dirname, join } from "node:path";
import { docsCsp } from "../http/security-headers.ts";

// Scalar's standalone bundle is served from node_modules: no CDN, so the docs work offline.
// The package exports no path to it, so it is found beside the package's entry point.
const scalarBundle = join(dirname(Bun.resolveSync("@scalar/api-reference", import.meta.dir)), "browser", "standalone.js");

// Configured for a self-hosted server: the features that need Scalar's hosted service (Ask AI,
// Generate MCP, the developer toolbar's Configure, Share and Deploy, the button that opens the
// hosted API client) are off, as is telemetry (requests are tried in the page's own client);
// the server comes from the document's `servers` (this service), and samples default to curl.
// withDefaultFonts: false keeps the page from reaching fonts.scalar.com.
const inlineScript = `
    Scalar.createApiReference("#app", {
      url: "/api/openapi.json",
      withDefaultFonts: false,
      showDeveloperTools: "never",
      agent: { disabled: true },
      mcp: { disabled: true },
      telemetry: false,
      hideClientButton: true,
      defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
      authentication: { preferredSecurityScheme: "bearerAuth" },
    });
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
