import { useState } from "preact/hooks";
import { ApiError, signedOutBecause, signIn } from "../api.ts";
import { location, navigate } from "../router.ts";
import { Toasts } from "../ui/kit.tsx";

/** Why a credential was refused, in words a person can act on. */
function refusalText(err: unknown, secret: string): string {
  if (!(err instanceof ApiError)) return err instanceof Error ? err.message : String(err);
  if (err.status === 401) {
    const looksLikeId = /^[A-Z0-9]{16,32}$/.test(secret.trim());
    const hint = looksLikeId
      ? " This looks like an access key id: paste the key's secret (64 hexadecimal characters) instead."
      : " Check that you pasted the whole secret, and that the key was not deleted, rotated or expired.";
    return `This key was not accepted (${err.message}).${hint}`;
  }
  if (err.status === 429) return "Too many attempts: wait a minute and try again.";
  if (err.status === 0) return err.message;
  return `Signing in failed: ${err.message}`;
}

export function SignInPage() {
  const [secret, setSecret] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!secret.trim()) return setError("Paste an API key secret or a JWT.");
    setBusy(true);
    setError(null);
    try {
      const who = await signIn(secret);
      const path = location.value.path;
      if (path === "/" || path === "") navigate(who.credential.bucketId ? `/buckets/${who.credential.bucketId}` : "/buckets", { replace: true });
    } catch (err) {
      setError(refusalText(err, secret));
    } finally {
      setBusy(false);
    }
  };
  document.title = "Sign in · Media console";
  return (
    <main class="sign-in" id="main">
      <form class="card sign-in-card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Media console</h1>
        <p class="sub">Sign in with an API key's secret or a dashboard JWT.</p>
        {signedOutBecause.value && !error && <p class="note">{signedOutBecause.value}</p>}
        <label class="field">
          <span class="field-label">API key secret or JWT</span>
          <input
            type="password"
            name="credential"
            autoComplete="off"
            spellcheck={false}
            value={secret}
            onInput={(e) => setSecret((e.target as HTMLInputElement).value)}
            aria-invalid={error ? "true" : undefined}
            aria-describedby={error ? "sign-in-error" : "sign-in-hint"}
            autoFocus
          />
          <span class="hint" id="sign-in-hint">
            Kept in this browser tab only (sessionStorage, never a cookie); closing the tab signs you out.
          </span>
        </label>
        {error && (
          <p class="error-note" id="sign-in-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p class="hint">
          The first start of the service prints an admin key's secret. Keys are managed here once you are in, or with
          <code> POST /api/api-keys</code>.
        </p>
      </form>
      <Toasts />
    </main>
  );
}
