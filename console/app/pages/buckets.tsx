import { useState } from "preact/hooks";
import { ApiError, call, can, describeError } from "../api.ts";
import { date, plural } from "../format.ts";
import { ConfirmButton, ErrorNote, Field, Link, Listed, notify, PageHead, TableHead, useLoad, useSubmit } from "../ui/kit.tsx";

interface Bucket {
  id: string;
  name: string;
  createdAt: string;
}

/** The 409 of a bucket delete, explained: why it is refused and what to do instead. */
export function bucketDeleteError(err: unknown, objects: number | undefined): Error {
  if (err instanceof ApiError && err.status === 409) {
    const held = objects !== undefined ? plural(objects, "live object") : "live objects";
    return new Error(
      `This bucket still holds ${held}, so it cannot be deleted (409 conflict: ${err.message}). Delete its objects first; deleted objects no longer count, and their bytes are purged after 7 days.`,
    );
  }
  return new Error(describeError(err));
}

export function BucketsPage() {
  const list = useLoad(async () => {
    const page = await call<{ data: Bucket[]; total: number }>("buckets_list", { limit: 200 });
    const counts = await Promise.all(page.data.map((b) => call<{ total: number }>("media_list", { bucketId: b.id, limit: 1 }).then((r) => r.total, () => undefined)));
    return page.data.map((b, i) => ({ ...b, objects: counts[i] }));
  }, []);
  const [name, setName] = useState("");
  const [create, createError] = useSubmit(async () => {
    const b = await call<Bucket>("buckets_create", { name: name.trim() });
    notify(`Bucket ${b.name} created`);
    setName("");
    list.reload();
  });
  return (
    <>
      <PageHead title="Buckets" sub="Each bucket holds media objects; open one to browse and upload." />
      {can("buckets_create") && (
        <form class="card inline-form" onSubmit={create} aria-label="Create a bucket">
          <Field label="New bucket name" hint="1-63 letters, digits, '.', '_' or '-'">
            <input value={name} required onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="photos" />
          </Field>
          <button type="submit" class="primary">
            Create bucket
          </button>
          <ErrorNote error={createError} />
        </form>
      )}
      <Listed rows={list.data} error={list.error} loading="Loading buckets" empty={`No buckets yet.${can("buckets_create") ? " Create one above." : ""}`}>
        {(rows) => (
        <table class="table">
          <TableHead columns={["Name", "Objects", "Created"]} actions />
          <tbody>
            {rows.map((b) => (
              <tr key={b.id}>
                <td>
                  <Link to={`/buckets/${b.id}`}>{b.name}</Link>
                  <div class="muted mono small-text">{b.id}</div>
                </td>
                <td data-label="Objects">{b.objects === undefined ? "–" : b.objects.toLocaleString()}</td>
                <td data-label="Created">{date(b.createdAt)}</td>
                <td class="row-actions">
                  {can("buckets_delete") && (
                    <ConfirmButton
                      label="Delete"
                      ariaLabel={`Delete bucket ${b.name}`}
                      question={`Delete bucket ${b.name}?`}
                      detail={<p>Only an empty bucket can be deleted. Its name becomes free again.</p>}
                      onConfirm={async () => {
                        try {
                          await call("buckets_delete", { id: b.id });
                        } catch (err) {
                          throw bucketDeleteError(err, b.objects);
                        }
                        notify(`Bucket ${b.name} deleted`);
                        list.reload();
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        )}
      </Listed>
    </>
  );
}
