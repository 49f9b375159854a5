import { me } from "../api.ts";
import { date } from "../format.ts";
import { Chip, PageHead } from "../ui/kit.tsx";

export function AccountPage() {
  const who = me.value!;
  const c = who.credential;
  return (
    <>
      <PageHead title="Account" sub="Who this credential is and what it may do." />
      <section class="card">
        <dl class="facts">
          <dt>Organization</dt>
          <dd>
            {who.organization.name} <span class="muted mono">{who.organization.id}</span>
          </dd>
          <dt>User</dt>
          <dd>
            {who.user.email ?? "–"} <span class="muted mono">{who.user.id}</span>
          </dd>
          <dt>Credential</dt>
          <dd>{c.type === "jwt" ? "Dashboard JWT (every scope in the organization)" : `API key ${c.accessKeyId}`}</dd>
          <dt>Scopes</dt>
          <dd>
            {c.scopes.map((s) => (
              <Chip key={s}>{s}</Chip>
            ))}
          </dd>
          <dt>Bucket reach</dt>
          <dd>{c.bucketId ? <span class="mono">only bucket {c.bucketId}</span> : "every bucket of the organization"}</dd>
          <dt>Expires</dt>
          <dd>{date(c.expiresAt)}</dd>
        </dl>
        <p class="hint">What this credential cannot do is not offered anywhere in the console; the tool explorer lists every tool and says why one is out of reach.</p>
      </section>
    </>
  );
}
