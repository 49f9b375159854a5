import { createHash, randomBytes } from "node:crypto";
import type { TestServer } from "./server.ts";

/** A PKCE pair (RFC 7636, S256). */
export function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export async function registerClient(server: TestServer, metadata: Record<string, unknown>) {
  const res = await fetch(`${server.url}/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(metadata) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

export async function tokenRequest(server: TestServer, params: Record<string, string>) {
  const res = await fetch(`${server.url}/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(params) });
  return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
}
