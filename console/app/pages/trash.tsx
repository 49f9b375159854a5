import { call, can } from "../api.ts";
import { bytes, date } from "../format.ts";
import { ConfirmButton, Listed, notify, notifyError, PageHead, TableHead, useAction, useLoad } from "../ui/kit.tsx";
import type { MediaObject } from "../ui/media.tsx";

interface Trashed extends MediaObject {
  deletedAt: string;
  restorableUntil: string;
  restorable: boolean;
  blockedBy: "key_in_use" | "key_reused" | null;
}

/** "3 days 4 hours", "5 hours", "under an hour": what is left before the purge. */
export function timeLeft(until: string, now = Date.now()): string {
  const ms = new Date(until).getTime() - now;
  if (ms <= 0) return "being purged";
  const hours = Math.floor(ms / 3_600_000);
  const days = Math.floor(hours / 24);
  if (days > 0) return `${days} day${days === 1 ? "" : "s"}${hours % 24 ? ` ${hours % 24} h` : ""}`;
  return hours > 0 ? `${hours} h` : "under an hour";
}

const BLOCKED: Record<string, string> = {
  key_in_use: "A live object holds its key now",
  key_reused: "An object uploaded at its key since was deleted too",
};

/** Deleted objects, kept until their purge: restore one, or purge it now (for good). */
export function TrashPage() {
  const list = useLoad(() => call<{ data: Trashed[]; total: number }>("trash_list", { limit: 200 }), []);
  return (
    <>
      <PageHead title="Trash" sub="Deleted objects stay here until the purge removes their bytes; restore brings one back at its key." />
      <Listed rows={list.data?.data} error={list.error} loading="Loading the trash" empty="The trash is empty.">
        {(rows) => (
          <table class="table trash-table">
            <TableHead columns={["Object", "Size", "Deleted", "Purged in"]} actions />
            <tbody>
              {rows.map((o) => (
                <TrashRow key={o.id} object={o} onChanged={list.reload} />
              ))}
            </tbody>
          </table>
        )}
      </Listed>
      {list.data && list.data.total > list.data.data.length && <p class="hint">Showing the {list.data.data.length} most recent of {list.data.total}.</p>}
    </>
  );
}

function TrashRow({ object: o, onChanged }: { object: Trashed; onChanged: () => void }) {
  const [restore, restoring] = useAction(async () => {
    await call("trash_restore", { id: o.id });
    notify(`${o.fileName} restored`);
    onChanged();
  });
  return (
    <tr data-id={o.id}>
      <td data-label="Object">
        <span class="break">{o.key}</span>
        {!o.restorable && o.blockedBy && <div class="muted small-text">{BLOCKED[o.blockedBy]}: it cannot be restored.</div>}
      </td>
      <td data-label="Size">{bytes(o.size)}</td>
      <td data-label="Deleted">{date(o.deletedAt)}</td>
      <td data-label="Purged in">
        <time dateTime={o.restorableUntil} title={date(o.restorableUntil)}>
          {timeLeft(o.restorableUntil)}
        </time>
      </td>
      <td class="actions">
        {can("trash_restore") && (
          <button type="button" class="small" disabled={restoring || !o.restorable} aria-label={`Restore ${o.fileName}`} onClick={() => restore().catch(notifyError)}>
            Restore
          </button>
        )}
        {can("trash_purge") && (
          <ConfirmButton
            label="Purge"
            class="danger small"
            ariaLabel={`Purge ${o.fileName}`}
            question={`Purge ${o.fileName} for good?`}
            detail={<p>Its bytes are removed now and it cannot be restored afterwards.</p>}
            confirmLabel="Purge for good"
            onConfirm={async () => {
              await call("trash_purge", { id: o.id });
              notify(`${o.fileName} purged`);
              onChanged();
            }}
          />
        )}
      </td>
    </tr>
  );
}
