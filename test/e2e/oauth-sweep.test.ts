import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { eq, inArray } from "drizzle-orm";
import { oauthClients, oauthGrants, oauthSecrets } from "../../db/schema/index.ts";
import { sweepOAuth } from "../../domain/access/oauth-sweep.ts";
import { testEnv } from "../support/env.ts";
import { withTwoOrgs } from "../support/fixtures.ts";
import { pkce, registerClient, tokenRequest } from "../support/oauth.ts";
import type { TestOrg, TestServer } from "../support/server.ts";

/**
 * The periodic maintenance sweeps OAuth leftovers of every organization: codes and tokens past
 * their expiry (and a grace hour), and clients that registered but never got a grant within a
 * day. Rows are made through the endpoints, then aged in the database; what is still in use
 * stays. On the run's shared PostgreSQL other files' rows are there too: only this file's rows
 * are counted.
 */
let server: TestServer;
let orgs: TestOrg[];
const REDIRECT = "http://127.0.0.1:9/callback";
const HOUR = 3_600_000;

withTwoOrgs({ ready: (made) => void ({ server, orgs } = { server: made.server, orgs: [made.org, made.other] }) });

const db = () => server.services.deps.db;
const hash = (v: string) => createHash("sha256").update(v).digest("hex");

async function newClient(name: string): Promise<string> {
  const reg = await registerClient(server, { client_name: name, redirect_uris: [REDIRECT] });
  expect(reg.status).toBe(201);
  return reg.body.client_id;
}

/** A grant in `org` for `clientId`, approved with the org's admin key: its unexchanged code and verifier. */
async function approve(org: TestOrg, clientId: string) {
  const { verifier, challenge } = pkce();
  const request = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", scope: "read", state: "s" }).toString();
  const res = await fetch(`${server.url}/authorize/decision`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${org.adminKey.secret}` },
    body: JSON.stringify({ request, approve: true, scopes: ["read"] }),
  });
  expect(res.status).toBe(200);
  return { code: new URL(((await res.json()) as { redirect: string }).redirect).searchParams.get("code")!, verifier };
}

async function tokens(org: TestOrg, clientId: string) {
  const { code, verifier } = await approve(org, clientId);
  const res = await tokenRequest(server, { grant_type: "authorization_code", code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT });
  expect(res.status).toBe(200);
  return { code, access: res.body.access_token as string, refresh: res.body.refresh_token as string };
}

/** Moves a secret's expiry `ms` before now. */
const expire = (value: string, ms: number) => db().update(oauthSecrets).set({ expiresAt: new Date(Date.now() - ms) }).where(eq(oauthSecrets.hash, hash(value)));
const ageClient = (id: string, ms: number) => db().update(oauthClients).set({ createdAt: new Date(Date.now() - ms) }).where(eq(oauthClients.id, id));
const secretsLeft = async (values: string[]) => (await db().select({ hash: oauthSecrets.hash }).from(oauthSecrets).where(inArray(oauthSecrets.hash, values.map(hash)))).map((r) => r.hash);
const clientsLeft = async (ids: string[]) => (await db().select({ id: oauthClients.id }).from(oauthClients).where(inArray(oauthClients.id, ids))).map((r) => r.id).sort();

describe("the OAuth sweep in the periodic maintenance", () => {
  test("expired codes and tokens of every organization go; live ones, and ones just expired, stay", async () => {
    const host = await newClient("Sweep host");
    const [a, b] = [await tokens(orgs[0]!, host), await tokens(orgs[1]!, host)];
    const pending = await approve(orgs[1]!, host);
    // Org A: its spent code and its access token long expired; its refresh token still live.
    await expire(a.code, 2 * HOUR);
    await expire(a.access, 2 * HOUR);
    // Org B: a spent refresh token past its expiry, an unexchanged code past its own, and an access token only a minute past (within the grace hour).
    await expire(b.refresh, 3 * HOUR);
    await expire(pending.code, 2 * HOUR);
    await expire(b.access, 60_000);

    await server.services.maintenance.runOnce();

    expect((await secretsLeft([a.code, a.access, a.refresh, b.code, b.refresh, pending.code, b.access])).sort()).toEqual([hash(a.refresh), hash(b.code), hash(b.access)].sort());
    // What stayed still works: org A's refresh token refreshes.
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: a.refresh, client_id: host })).status).toBe(200);
    // A swept code is unknown now: refused like any other.
    const replay = await tokenRequest(server, { grant_type: "authorization_code", code: pending.code, code_verifier: pending.verifier, client_id: host, redirect_uri: REDIRECT });
    expect([replay.status, replay.body.error]).toEqual([400, "invalid_grant"]);
  });

  test("clients never granted anything within a day go; newer ones and ones with a grant (even revoked) stay", async () => {
    const [abandoned, fresh, used, revoked] = [await newClient("Abandoned"), await newClient("Fresh"), await newClient("Used"), await newClient("Revoked")];
    await approve(orgs[0]!, used);
    await approve(orgs[1]!, revoked);
    const [grant] = await db().select({ id: oauthGrants.id }).from(oauthGrants).where(eq(oauthGrants.clientId, revoked));
    expect((await orgs[1]!.admin.post(`/api/oauth-grants/${grant!.id}/revoke`)).status).toBe(200);
    for (const id of [abandoned, used, revoked]) await ageClient(id, 25 * HOUR);
    await ageClient(fresh, 23 * HOUR);

    await server.services.maintenance.runOnce();

    expect(await clientsLeft([abandoned, fresh, used, revoked])).toEqual([fresh, used, revoked].sort());
    // The application that abandoned its registration is told to register again.
    const q = new URLSearchParams({ response_type: "code", client_id: abandoned, redirect_uri: REDIRECT, code_challenge: pkce().challenge, code_challenge_method: "S256" });
    const res = await fetch(`${server.url}/authorize?${q}`, { redirect: "manual" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("must register again");
  });

  test("two instances sweeping at once, in small batches: every row goes, and neither fails", async () => {
    const host = await newClient("Busy host");
    const made = await Promise.all(Array.from({ length: 6 }, (_, i) => tokens(orgs[i % 2]!, host)));
    const values = made.flatMap((t) => [t.code, t.access, t.refresh]);
    for (const v of values) await expire(v, 2 * HOUR);
    const idle = await Promise.all(Array.from({ length: 5 }, (_, i) => newClient(`Idle ${i}`)));
    for (const id of idle) await ageClient(id, 25 * HOUR);

    const [one, two] = await Promise.all([sweepOAuth(server.services.deps, 2), sweepOAuth(server.services.deps, 2)]);

    expect(await secretsLeft(values)).toEqual([]);
    expect(await clientsLeft(idle)).toEqual([]);
    // A row is deleted by one statement only; other files' rows may be swept too on a shared database.
    expect(one.secrets + two.secrets).toBeGreaterThanOrEqual(values.length);
    expect(one.clients + two.clients).toBeGreaterThanOrEqual(idle.length);
  });

  // Needs a second connection: PGlite's one connection would wait on the open transaction.
  test.skipIf(testEnv.mode === "embedded")("a client whose approval is under way is not swept from under it", async () => {
    const host = await newClient("Slow approver");
    await ageClient(host, 25 * HOUR);
    await db().transaction(async (tx) => {
      // What approveGrant holds from its first statement to its commit.
      await tx.select({ id: oauthClients.id }).from(oauthClients).where(eq(oauthClients.id, host)).for("share");
      await sweepOAuth(server.services.deps);
      expect(await clientsLeft([host])).toEqual([host]);
    });
  });
});
