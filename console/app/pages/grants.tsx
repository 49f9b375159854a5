import { call, can } from "../api.ts";
import { date } from "../format.ts";
import { Chip, ConfirmButton, Empty, ErrorNote, Loading, notify, PageHead, TableHead, useLoad } from "../ui/kit.tsx";

interface Grant {
  id: string;
  clientName: string;
  scopes: string[];
  bucketId: string | null;
  resource: string;
  createdAt: string;
  refreshedAt: string | null;
  revokedAt: string | null;
  expiresAt: string;
  active: boolean;
}

/** Applications people approved through OAuth (MCP hosts), and taking an approval back. */
export function GrantsPage() {
  const grants = useLoad(() => call<{ data: Grant[]; total: number }>("oauth_grants_list", { limit: 200 }), []);
  const buckets = useLoad(() => (can("buckets_list") ? call<{ data: { id: string; name: string }[] }>("buckets_list", { limit: 200 }).then((r) => r.data) : Promise.resolve([])), []);
  const bucketName = (id: string | null) => (id ? buckets.data?.find((b) => b.id === id)?.name ?? id : "all buckets");
  return (
    <>
      <PageHead title="Connected apps" sub="Applications people allowed through OAuth. Revoking one stops its tokens at once." />
      <ErrorNote error={grants.error} />
      {!grants.data ? (
        <Loading />
      ) : grants.data.data.length === 0 ? (
        <Empty>No application has been approved yet.</Empty>
      ) : (
        <table class="table">
          <TableHead columns={["Application", "Scopes", "Bucket", "Approved", "State"]} actions />
          <tbody>
            {grants.data.data.map((g) => (
              <tr key={g.id} data-grant={g.id}>
                <td>
                  {g.clientName}
                  <div class="muted mono small-text">{g.resource}</div>
                </td>
                <td data-label="Scopes">
                  {g.scopes.map((s) => (
                    <Chip key={s}>{s}</Chip>
                  ))}
                </td>
                <td data-label="Bucket">{bucketName(g.bucketId)}</td>
                <td data-label="Approved">
                  {date(g.createdAt)}
                  {g.refreshedAt && <div class="muted small-text">refreshed {date(g.refreshedAt)}</div>}
                </td>
                <td data-label="State">{g.revokedAt ? <Chip tone="warn">revoked</Chip> : g.active ? <Chip tone="info">active</Chip> : <Chip tone="warn">expired</Chip>}</td>
                <td class="row-actions">
                  {g.active && can("oauth_grants_revoke") && (
                    <ConfirmButton
                      class="small danger"
                      label="Revoke"
                      ariaLabel={`Revoke ${g.clientName}`}
                      question={`Revoke ${g.clientName}?`}
                      detail={<p>Its tokens stop working at once; it must ask again to come back.</p>}
                      onConfirm={async () => {
                        await call("oauth_grants_revoke", { id: g.id });
                        notify(`${g.clientName} revoked`);
                        grants.reload();
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
