import { useState } from "preact/hooks";
import { call, can, errorOf, me, token } from "../api.ts";
import { hasScope } from "../../../domain/access/caller.ts";
import type { Scope } from "../../../domain/access/caller.ts";
import { location } from "../router.ts";
import { ErrorNote, Field, Loading, PageHead, useLoad } from "../ui/kit.tsx";

interface AuthorizationRequest {
  clientId: string;
  clientName: string;
  redirectUri: string;
  resource: string;
  scopes: Scope[];
}

const SCOPE_TEXT: Record<Scope, string> = {
  read: "see buckets, media and their metadata",
  write: "upload, change and organize media",
  delete: "delete media and other things",
  admin: "everything, keys and billing included",
};

/**
 * Where an MCP host sends a person (through /authorize): who is asking, where the answer goes,
 * and what they may do. The person picks scopes within their own credential and optionally one
 * bucket; the service checks the same rules again when the decision arrives.
 */
export function ConsentPage() {
  const request = location.value.query.toString();
  const info = useLoad(async () => {
    const res = await fetch(`/authorize/request?${request}`, { headers: { accept: "application/json" } });
    if (!res.ok) throw await errorOf(res);
    return (await res.json()) as AuthorizationRequest;
  }, [request]);
  const buckets = useLoad(() => (can("buckets_list") ? call<{ data: { id: string; name: string }[] }>("buckets_list", { limit: 200 }).then((r) => r.data) : Promise.resolve([])), []);
  const credential = me.value!.credential;
  const own = { scopes: new Set(credential.scopes) };
  const [picked, setPicked] = useState<Scope[] | null>(null);
  const [bucket, setBucket] = useState(credential.bucketId ?? "");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  if (info.error) return <><PageHead title="Authorize an application" /><ErrorNote error={info.error} /></>;
  if (!info.data) return <Loading />;
  const req = info.data;
  const allowed = req.scopes.filter((s) => hasScope(own, s));
  // Least privilege first: admin only when ticked, unless it is all that was asked for.
  const scopes = picked ?? (allowed.filter((s) => s !== "admin").length > 0 ? allowed.filter((s) => s !== "admin") : allowed);

  const decide = async (approve: boolean) => {
    setBusy(true);
    setError(null);
    try {
      const res = await fetch("/authorize/decision", {
        method: "POST",
        headers: { authorization: `Bearer ${token.value}`, "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ request, approve, scopes: approve ? scopes : [], ...(approve && bucket ? { bucketId: bucket } : {}) }),
      });
      if (!res.ok) throw await errorOf(res);
      window.location.assign(((await res.json()) as { redirect: string }).redirect);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <>
      <PageHead title={`Allow ${req.clientName}?`} sub="An application asks to use this organization's media storage on your behalf." />
      <form
        class="card consent"
        aria-label="Authorize the application"
        onSubmit={(e) => {
          e.preventDefault();
          void decide(true);
        }}
      >
        <dl class="facts">
          <dt>Application</dt>
          <dd>{req.clientName}</dd>
          <dt>Answer goes to</dt>
          <dd class="mono">{req.redirectUri}</dd>
          <dt>Tokens for</dt>
          <dd class="mono">{req.resource}</dd>
        </dl>
        <fieldset class="scopes">
          <legend>Scopes</legend>
          {req.scopes.map((s) => (
            <label key={s} class="check">
              <input
                type="checkbox"
                checked={scopes.includes(s)}
                disabled={!allowed.includes(s)}
                onChange={(e) => setPicked((e.target as HTMLInputElement).checked ? [...scopes, s] : scopes.filter((x) => x !== s))}
              />{" "}
              {s}: {SCOPE_TEXT[s]}
              {!allowed.includes(s) && <span class="muted"> (your credential does not have it)</span>}
            </label>
          ))}
        </fieldset>
        <Field label="Bucket" hint="Restrict the application to one bucket, or let it reach all of yours">
          <select value={bucket} onChange={(e) => setBucket((e.target as HTMLSelectElement).value)} disabled={credential.bucketId !== null}>
            {credential.bucketId === null && <option value="">All buckets</option>}
            {buckets.data?.map((b) => (
              <option key={b.id} value={b.id}>
                {b.name}
              </option>
            ))}
          </select>
        </Field>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || scopes.length === 0}>
            Allow
          </button>{" "}
          <button type="button" disabled={busy} onClick={() => void decide(false)}>
            Deny
          </button>
        </div>
        <ErrorNote error={error} />
      </form>
    </>
  );
}
