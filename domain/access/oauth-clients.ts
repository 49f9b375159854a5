import { eq } from "drizzle-orm";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { oauthClients } from "../../db/schema/index.ts";
import type { Deps } from "../core/deps.ts";
import { OAuthError } from "./oauth-errors.ts";

export type OAuthClient = typeof oauthClients.$inferSelect;

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * Where a code may be sent: https anywhere, or http to this machine's loopback (a native app's
 * local listener, RFC 8252 section 7.3). Nothing else: a code sent in the clear over a network,
 * or to a custom scheme another app may claim, could be read by someone else.
 */
export function redirectUriProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${JSON.stringify(value)} is not an absolute URL`;
  }
  if (url.hash) return `${value} has a fragment; a redirect URI may not`;
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) return null;
  return `${value} is neither https nor http to a loopback address (127.0.0.1, [::1], localhost)`;
}

const registration = z.object({
  redirect_uris: z.array(z.string().max(2000)).min(1).max(10),
  client_name: z.string().trim().min(1).max(100).optional(),
  grant_types: z.array(z.string()).optional(),
  response_types: z.array(z.string()).optional(),
});

const GRANT_TYPES = ["authorization_code", "refresh_token"];

/**
 * Dynamic client registration (RFC 7591). Every client is public: it proves itself with PKCE,
 * not a secret, so whatever `token_endpoint_auth_method` it asks for, it is told `none`
 * (the RFC lets the server replace a requested value).
 */
export async function registerClient(deps: Deps, body: unknown) {
  const parsed = registration.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new OAuthError("invalid_client_metadata", `${issue.path.join(".") || "body"}: ${issue.message}`);
  }
  const meta = parsed.data;
  for (const uri of meta.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError("invalid_redirect_uri", problem);
  }
  const unknownGrant = meta.grant_types?.find((g) => !GRANT_TYPES.includes(g));
  if (unknownGrant) throw new OAuthError("invalid_client_metadata", `grant_types: ${unknownGrant} is not offered; send authorization_code and refresh_token`);
  if (meta.response_types?.some((r) => r !== "code")) throw new OAuthError("invalid_client_metadata", "response_types: only code is offered");
  const now = deps.clock.now();
  const [client] = await deps.db
    .insert(oauthClients)
    .values({ id: `mcc_${randomBytes(16).toString("base64url")}`, name: meta.client_name ?? "Unnamed client", redirectUris: [...new Set(meta.redirect_uris)], createdAt: now })
    .returning();
  return {
    client_id: client!.id,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    client_name: client!.name,
    redirect_uris: client!.redirectUris,
    token_endpoint_auth_method: "none",
    grant_types: GRANT_TYPES,
    response_types: ["code"],
  };
}

export async function findClient(deps: Deps, clientId: string): Promise<OAuthClient | null> {
  const [client] = await deps.db.select().from(oauthClients).where(eq(oauthClients.id, clientId)).limit(1);
  return client ?? null;
}
