import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Browser, Page } from "playwright-core";
import { testEnv } from "../support/env.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { seriousViolations } from "./axe.ts";
import { haveChromium, launch, newPage, screenshot } from "./browser.ts";
import { containsText } from "./expect.ts";

/**
 * OAuth end to end as an MCP host does it: the SDK's own client (`auth()` with an
 * OAuthClientProvider) discovers, registers and sends the person to the authorization URL; the
 * person signs in to the console in Chromium, picks scopes and a bucket and approves; the host
 * exchanges the code and lists the tools with the token. Then the console's list of connected
 * apps revokes it. Runs where console.test.ts runs (the embedded pass, with Chromium).
 */
// One pass: the console is the same on every backend; the PostgreSQL pass need not even load this file.
const run = haveChromium && testEnv.mode === "embedded";

/** Nothing listens here: the browser's request to it is caught, as a host's local listener would catch it. */
const CALLBACK = "http://127.0.0.1:9/oauth/callback";

/** An MCP host's memory: what the SDK asks it to keep, and the authorization URL it is told to open. */
class HostProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  opened: URL | null = null;
  get redirectUrl() {
    return CALLBACK;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "Test MCP host", redirect_uris: [CALLBACK], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.opened = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

let server: TestServer;
let org: TestOrg;
let browser: Browser;
let page: Page;
let problems: string[];

async function checkPage(p: Page, name: string) {
  await screenshot(p, name);
  expect({ page: name, violations: await seriousViolations(p) }).toEqual({ page: name, violations: [] });
}

/** Opens the authorization URL in the browser and waits for the answer at the callback. */
async function personDecides(p: Page, url: URL, act: (p: Page) => Promise<void>): Promise<URL> {
  let answered: (u: URL) => void;
  const answer = new Promise<URL>((resolve) => (answered = resolve));
  await p.route(`${CALLBACK}**`, (route) => {
    answered(new URL(route.request().url()));
    return route.fulfill({ status: 200, contentType: "text/plain", body: "You can close this window." });
  });
  await p.goto(url.toString());
  await act(p);
  const back = await answer;
  await p.unroute(`${CALLBACK}**`);
  return back;
}

async function listTools(provider: HostProvider): Promise<string[]> {
  const client = new Client({ name: "oauth-host", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { authProvider: provider }));
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

describe.skipIf(!run)("OAuth through the console's consent page", () => {
  let bucketId: string;
  const provider = new HostProvider();

  beforeAll(async () => {
    server = await startServer();
    org = await newOrg(server, "OAuth org");
    bucketId = (await org.admin.post("/api/buckets", { name: "shared-with-host" })).body.id;
    await org.admin.post("/api/buckets", { name: "kept-private" });
    browser = await launch();
    ({ page, problems } = await newPage(browser));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, 60_000);

  test("the SDK's provider registers and is sent to the consent page; the person signs in, picks, approves; tools/list works with the token", async () => {
    const serverUrl = new URL(`${server.url}/mcp`);
    expect(await auth(provider, { serverUrl })).toBe("REDIRECT");
    expect(provider.client?.client_id).toStartWith("mcc_");
    const opened = provider.opened!;
    expect(opened.origin + opened.pathname).toBe(`${server.url}/authorize`);
    expect(opened.searchParams.get("resource")).toBe(`${server.url}/mcp`);

    const back = await personDecides(page, opened, async (p) => {
      await p.getByLabel("API key secret or JWT").fill(org.adminKey.secret);
      await p.getByRole("button", { name: "Sign in" }).click();
      await p.getByRole("heading", { name: "Allow Test MCP host?" }).waitFor();
      await containsText(p.locator(".consent"), CALLBACK);
      await containsText(p.locator(".consent"), `${server.url}/mcp`);
      // Least privilege first: read, write and delete are ticked, admin is not.
      expect(await p.getByRole("checkbox", { name: /^admin/ }).isChecked()).toBe(false);
      await p.getByRole("checkbox", { name: /^delete/ }).uncheck();
      await p.getByRole("combobox", { name: /^Bucket/ }).selectOption({ label: "shared-with-host" });
      await checkPage(p, "oauth-01-consent");
      await p.getByRole("button", { name: "Allow" }).click();
    });
    expect(back.searchParams.get("error")).toBeNull();
    expect(back.searchParams.get("iss")).toBe(server.url);
    expect(await auth(provider, { serverUrl, authorizationCode: back.searchParams.get("code")! })).toBe("AUTHORIZED");
    expect(provider.saved).toMatchObject({ token_type: "Bearer", scope: "read write", expires_in: 3600 });

    const tools = await listTools(provider);
    expect(tools).toContain("presign_upload");
    expect(tools).toContain("buckets_list");
    expect(tools).not.toContain("media_delete");
    // Bucket-restricted: tools acting on the whole organization are not offered.
    expect(tools).not.toContain("buckets_create");
    const grants = await org.admin.get("/api/oauth-grants");
    expect(grants.body.data[0]).toMatchObject({ clientName: "Test MCP host", scopes: ["read", "write"], bucketId, active: true });
    expect(problems).toEqual([]);
  }, 120_000);

  test("the refresh token renews the access token through the SDK", async () => {
    const before = provider.saved!;
    expect(await auth(provider, { serverUrl: new URL(`${server.url}/mcp`) })).toBe("AUTHORIZED");
    expect(provider.saved!.refresh_token).not.toBe(before.refresh_token);
    expect(await listTools(provider)).toContain("buckets_list");
  }, 60_000);

  test("connected apps lists the grant; revoking it ends the token at once", async () => {
    await page.goto(`${server.url}/console/grants`);
    await page.getByRole("heading", { name: "Connected apps" }).waitFor();
    await containsText(page.locator("table"), "Test MCP host");
    await checkPage(page, "oauth-02-connected-apps");
    await page.getByRole("button", { name: "Revoke Test MCP host" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
    await containsText(page.locator("table"), "revoked");
    const stale = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${provider.saved!.access_token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(stale.status).toBe(401);
    expect(problems).toEqual([]);
  }, 60_000);

  test("a person with a read key cannot tick more; denying sends access_denied back", async () => {
    const reader = await org.keyClient(["read"]);
    const host = new HostProvider();
    expect(await auth(host, { serverUrl: new URL(`${server.url}/mcp`) })).toBe("REDIRECT");
    const { page: other } = await newPage(browser);
    const back = await personDecides(other, host.opened!, async (p) => {
      await p.getByLabel("API key secret or JWT").fill(reader.secret);
      await p.getByRole("button", { name: "Sign in" }).click();
      await p.getByRole("heading", { name: "Allow Test MCP host?" }).waitFor();
      expect(await p.getByRole("checkbox", { name: /^write/ }).isDisabled()).toBe(true);
      expect(await p.getByRole("checkbox", { name: /^read/ }).isChecked()).toBe(true);
      await p.getByRole("button", { name: "Deny" }).click();
    });
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("code")).toBeNull();
  }, 60_000);
});
