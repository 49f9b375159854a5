import { expect } from "bun:test";
import { signRequest } from "../../domain/access/http-signatures.ts";
import type { PageClaims } from "./claim.ts";
import { DAY_MS, org } from "../support/claim-checks.ts";

const SIGNED = "test/integration/signed-requests.test.ts";

export default {
  page: "docs/signed-requests.md",
  claims: [
    { says: "It is HTTP Message Signatures (RFC 9421) with HMAC-SHA256, over a Content-Digest of the body (RFC 9530)", by: { file: SIGNED, test: "a missing or unusable Content-Digest" } },
    { says: "It is HTTP Message Signatures (RFC 9421) with HMAC-SHA256,", by: { file: SIGNED, test: "a signed request acts in the credential's organization, as the credential" } },
    {
      says: "Like an API key it has scopes (default read), an optional bucketId restricting it to one bucket, an expiry (expiresInDays, default 90, at most 365),",
      check: async (server) => {
        const o = await org(server);
        // A person's JWT: its own short life does not cap what it creates.
        const made = await o.owner.post("/api/service-credentials", { name: "defaults" });
        expect(made.status).toBe(201);
        expect(made.body.scopes).toEqual(["read"]);
        const days = (iso: string) => Math.round((Date.parse(iso) - Date.now()) / DAY_MS);
        expect(days(made.body.expiresAt)).toBe(90);
        const longest = await o.owner.post("/api/service-credentials", { name: "longest", expiresInDays: 365 });
        expect([longest.status, days(longest.body.expiresAt)]).toEqual([201, 365]);
        for (const expiresInDays of [0, 366]) {
          const res = await o.owner.post("/api/service-credentials", { name: "refused", expiresInDays });
          expect([res.status, res.body.error.details[0].path]).toEqual([400, "expiresInDays"]);
        }
      },
    },
    { says: "and cannot grant more than its creator has; its secret is shown once.", by: { file: SIGNED, test: "scopes and the bucket restriction apply as for an API key" } },
    {
      says: "created, keyid and alg (required) and nonce (optional, up to 128 characters),",
      check: async (server) => {
        const o = await org(server);
        const credential = (await o.owner.post("/api/service-credentials", { name: "nonces" })).body as { keyId: string; secret: string };
        const me = async (nonce: string) => {
          const url = `${server.url}/api/me`;
          const res = await fetch(url, { headers: signRequest({ method: "GET", url }, credential, { nonce }) });
          return { status: res.status, body: (await res.json()) as { error?: { message: string } } };
        };
        expect((await me("n".repeat(128))).status).toBe(200);
        const long = await me("m".repeat(129));
        expect(long.status).toBe(401);
        expect(long.body.error!.message).toContain("at most 128 characters");
      },
    },
    { says: "RFC 8941 serializes them (strings quoted, integers bare), the same text in Signature-Input and in the last line of the base.", by: { file: SIGNED, test: "malformed signature headers, other components or algorithms" } },
    { says: "created must be within 300 seconds of the service's clock, either way: keep clocks in sync.", by: { file: SIGNED, test: "a signature made more than five minutes away from the service's clock, either way" } },
    { says: "Every refusal is 401 unauthorized, with a message saying which check failed:", by: { file: SIGNED, test: "another method, path or query than the one signed" } },
    { says: "a signature that does not verify (unknown keyid, another secret, or another method, URI or digest: one answer for all, so a refusal never tells whether a keyid exists),", by: { file: SIGNED, test: "a known keyid with a forged signature and a body off its digest learns nothing more than an unknown keyid" } },
    { says: "the body not matching Content-Digest (said only once the signature verified), an expired credential, or a signature seen before.", by: { file: SIGNED, test: "a body changed after signing" } },
    { says: "an expired credential, or a signature seen before.", by: { file: SIGNED, test: "an expired or deleted credential" } },
    { says: "or a signature seen before.", by: { file: SIGNED, test: "the same signature twice (a replay)" } },
    { says: "While Redis is unreachable, signed requests get 503 unavailable (the replay check does not fail open, unlike the rate limit).", by: { file: SIGNED, test: "while the store of seen signatures is unreachable: 503, not a replay let through" } },
  ],
  notPromises: [{ says: "it needs only node:crypto and the structured-headers package.", why: "a package name, not a header" }],
} satisfies PageClaims;
