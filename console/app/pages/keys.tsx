import { useState } from "preact/hooks";
import { call, can, me } from "../api.ts";
import { date } from "../format.ts";
import { Chip, ConfirmButton, CopyButton, Dialog, ErrorNote, Field, Loading, notify, PageHead, TableHead, useLoad, useSubmit } from "../ui/kit.tsx";

interface ApiKey {
  id: string;
  name: string;
  accessKeyId: string;
  scopes: string[];
  bucketId: string | null;
  expiresAt: string;
  createdAt: string;
  rotatedAt: string | null;
  expired: boolean;
}
type WithSecret = ApiKey & { secret: string; note: string };

const SCOPES = ["read", "write", "delete", "admin"];

export function KeysPage() {
  const keys = useLoad(() => call<{ data: ApiKey[]; total: number }>("api_keys_list", { limit: 200 }), []);
  const buckets = useLoad(() => call<{ data: { id: string; name: string }[] }>("buckets_list", { limit: 200 }).then((r) => r.data), []);
  const restricted = me.value?.credential.bucketId ?? null;
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<string[]>(["read"]);
  const [bucket, setBucket] = useState(restricted ?? "");
  const [days, setDays] = useState(90);
  const [secret, setSecret] = useState<WithSecret | null>(null);
  const bucketName = (id: string | null) => (id ? buckets.data?.find((b) => b.id === id)?.name ?? id : "all buckets");

  const [create, error] = useSubmit(async () => {
    const k = await call<WithSecret>("api_keys_create", { name: name.trim(), scopes, expiresInDays: days, ...(bucket ? { bucketId: bucket } : {}) });
    setSecret(k);
    setName("");
    keys.reload();
  });

  return (
    <>
      <PageHead title="API keys" sub="Keys for programs and people; a key cannot grant more than the key that creates it." />
      {can("api_keys_create") && (
        <form class="card key-form" onSubmit={create} aria-label="Create an API key">
          <Field label="Name">
            <input value={name} required onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="laptop" />
          </Field>
          <fieldset class="scopes">
            <legend>Scopes</legend>
            {SCOPES.map((s) => (
              <label key={s} class="check">
                <input
                  type="checkbox"
                  checked={scopes.includes(s)}
                  onChange={(e) => setScopes((e.target as HTMLInputElement).checked ? [...scopes, s] : scopes.filter((x) => x !== s))}
                />{" "}
                {s}
              </label>
            ))}
          </fieldset>
          <Field label="Bucket">
            <select value={bucket} onChange={(e) => setBucket((e.target as HTMLSelectElement).value)} disabled={restricted !== null}>
              {restricted === null && <option value="">All buckets</option>}
              {buckets.data?.map((b) => (
                <option key={b.id} value={b.id}>
                  {b.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Expires in (days)" hint="1 to 365">
            <input type="number" min={1} max={365} value={days} onInput={(e) => setDays(Number((e.target as HTMLInputElement).value))} />
          </Field>
          <button type="submit" class="primary" disabled={scopes.length === 0}>
            Create key
          </button>
          <ErrorNote error={error} />
        </form>
      )}
      <SecretDialog apiKey={secret} onClose={() => setSecret(null)} />
      <ErrorNote error={keys.error} />
      {!keys.data ? (
        <Loading />
      ) : (
        <table class="table">
          <TableHead columns={["Name", "Scopes", "Bucket", "Expires"]} actions />
          <tbody>
            {keys.data.data.map((k) => (
              <tr key={k.id} data-key-name={k.name}>
                <td>
                  {k.name}
                  {k.id === me.value?.credential.apiKeyId && <> <Chip tone="info">this session</Chip></>}
                  <div class="muted mono small-text">{k.accessKeyId}</div>
                </td>
                <td data-label="Scopes">
                  {k.scopes.map((s) => (
                    <Chip key={s}>{s}</Chip>
                  ))}
                </td>
                <td data-label="Bucket">{bucketName(k.bucketId)}</td>
                <td data-label="Expires">
                  {k.expired ? <Chip tone="warn">expired</Chip> : date(k.expiresAt)}
                  {k.rotatedAt && <div class="muted small-text">rotated {date(k.rotatedAt)}</div>}
                </td>
                <td class="row-actions">
                  {can("api_keys_rotate") && (
                    <ConfirmButton
                      class="small"
                      label="Rotate"
                      ariaLabel={`Rotate ${k.name}`}
                      question={`Rotate ${k.name}?`}
                      detail={<p>A new secret is issued and the old one stops working at once. Programs using it must be given the new one.</p>}
                      onConfirm={async () => {
                        setSecret(await call<WithSecret>("api_keys_rotate", { id: k.id }));
                        keys.reload();
                      }}
                    />
                  )}
                  {can("api_keys_delete") && (
                    <ConfirmButton
                      class="small danger"
                      label="Delete"
                      ariaLabel={`Delete ${k.name}`}
                      question={`Delete ${k.name}?`}
                      detail={<p>Its secret stops working at once.{k.id === me.value?.credential.apiKeyId ? " This is the key you are signed in with: you will be signed out." : ""}</p>}
                      onConfirm={async () => {
                        await call("api_keys_delete", { id: k.id });
                        notify(`Key ${k.name} deleted`);
                        keys.reload();
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** The secret, shown this once: the service keeps only its hash. */
function SecretDialog({ apiKey, onClose }: { apiKey: WithSecret | null; onClose: () => void }) {
  return (
    <Dialog title={apiKey ? `Secret of ${apiKey.name}` : "Secret"} open={apiKey !== null} onClose={onClose} wide>
      {apiKey && (
        <>
          <p class="warn-note">This is the only time the secret is shown. Copy it now and keep it somewhere safe; it cannot be shown again, only rotated.</p>
          <div class="secret-box">
            <code class="secret" data-testid="new-secret">
              {apiKey.secret}
            </code>
            <CopyButton text={apiKey.secret} label="Copy secret" />
          </div>
          {/* The service's note: how to use the secret, and whether the expiry was capped at the creator's. */}
          <p class="hint" data-testid="secret-note">
            {apiKey.note} Access key id: <span class="mono">{apiKey.accessKeyId}</span>. Expires {date(apiKey.expiresAt)}.
          </p>
          <div class="actions">
            <button type="button" class="primary" onClick={onClose}>
              I have stored it
            </button>
          </div>
        </>
      )}
    </Dialog>
  );
}
