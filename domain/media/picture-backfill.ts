import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import type { Deps } from "../core/deps.ts";
import { enqueueJob } from "../core/jobs.ts";
import { pictureFacts } from "./picture-facts.ts";
import type { MediaKind } from "./kind.ts";

/**
 * The picture hash and dominant colour of objects whose thumbnail was made before they were
 * stored (domain/media/similar.ts, colors.ts), computed from that thumbnail: no file is decoded
 * again. One run per organization, started at a worker's start (planPictureBackfills), walks its
 * objects in id order a batch per `media.pictures` job and keeps the last id done in
 * backfill_runs, so a run that stops resumes at its cursor. Running a batch twice writes the
 * same values; a batch that finds the cursor moved (a duplicate job) writes nothing.
 */

const KIND = "pictures";
const BATCH = 100;

/** What the worker reads from a thumbnail's bytes. */
export type PictureReader = (thumbnail: Uint8Array) => Promise<{ phash: string; color: string }>;

/**
 * Starts a run for each organization that has a picture with a thumbnail but no hash and no run
 * yet (called once per worker start). Organizations whose pictures all have one (every object
 * stored by this release) get none, so nothing is written for them.
 */
export async function planPictureBackfills(deps: Deps): Promise<number> {
  return deps.db.transaction(async (tx) => {
    const started = rowsOf<{ org_id: string }>(
      await tx.execute(sql`
        insert into backfill_runs (org_id, kind)
        select distinct o.org_id, ${KIND} from media_objects o
        join derivatives d on d.object_id = o.id and d.variant = 'thumbnail' and d.state = 'ready'
        left join object_facts f on f.object_id = o.id
        where o.deleted_at is null and o.kind in ('image', 'video', 'pdf') and f.phash is null
          and not exists (select 1 from backfill_runs r where r.org_id = o.org_id and r.kind = ${KIND})
        on conflict do nothing
        returning org_id`),
    );
    for (const r of started) await enqueueJob(tx, "media.pictures", { orgId: r.org_id });
    return started.length;
  });
}

/** One batch of an organization's run; returns true when more remain (the next job is queued). */
export async function pictureBackfillBatch(deps: Deps, orgId: string, read: PictureReader): Promise<boolean> {
  const [run] = rowsOf<{ cursor: string | null; finished_at: string | null }>(
    await deps.db.execute(sql`select cursor, finished_at from backfill_runs where org_id = ${orgId} and kind = ${KIND}`),
  );
  if (!run || run.finished_at) return false;
  const batch = rowsOf<{ id: string; kind: MediaKind; etag: string | null; storage_key: string | null; todo: boolean }>(
    await deps.db.execute(sql`
      select o.id, o.kind, o.etag, d.storage_key,
        (d.state = 'ready' and d.source_etag is not distinct from o.etag and (f.object_id is null or f.phash is null)) as todo
      from media_objects o
      left join derivatives d on d.object_id = o.id and d.variant = 'thumbnail'
      left join object_facts f on f.object_id = o.id
      where o.org_id = ${orgId} and o.deleted_at is null and o.kind in ('image', 'video', 'pdf')
        ${run.cursor ? sql`and o.id > ${run.cursor}::uuid` : sql``}
      order by o.id limit ${BATCH}`),
  );
  const found: { id: string; kind: MediaKind; etag: string | null; info: Record<string, unknown> }[] = [];
  for (const o of batch.filter((b) => b.todo && b.storage_key)) {
    const got = await deps.storage.get(o.storage_key!);
    // Replaced since the batch was read: the job that replaced it wrote the hash.
    if (!got) continue;
    const { phash, color } = await read(new Uint8Array(await new Response(got.body).arrayBuffer()));
    found.push({ id: o.id, kind: o.kind, etag: o.etag, info: { phash, placeholder: { color } } });
  }
  const more = batch.length === BATCH;
  return deps.db.transaction(async (tx) => {
    const [now] = rowsOf<{ cursor: string | null }>(
      await tx.execute(sql`select cursor from backfill_runs where org_id = ${orgId} and kind = ${KIND} and finished_at is null for update`),
    );
    // Another job of the same run got here first: it wrote this batch.
    if (!now || now.cursor !== run.cursor) return false;
    for (const o of found) {
      const pic = pictureFacts(o.kind, o.info);
      // Written only for the version the thumbnail is of; a newer one gets its own from its job.
      await tx.execute(sql`
        with target as (
          select id from media_objects where id = ${o.id} and deleted_at is null and etag is not distinct from ${o.etag}::text for update
        ),
        informed as (
          update media_objects set info = info || ${JSON.stringify({ phash: o.info.phash })}::jsonb where id in (select id from target)
        )
        insert into object_facts (object_id, org_id, source_etag, phash, phash0, phash1, phash2, phash3, color_l, color_a, color_b)
        select t.id, ${orgId}::uuid, ${o.etag}::text, ${pic.phash}::bigint, ${pic.segments[0]}::int, ${pic.segments[1]}::int, ${pic.segments[2]}::int, ${pic.segments[3]}::int,
          ${pic.lab?.l ?? null}::real, ${pic.lab?.a ?? null}::real, ${pic.lab?.b ?? null}::real
        from target t
        on conflict (object_id) do update set
          phash = excluded.phash, phash0 = excluded.phash0, phash1 = excluded.phash1, phash2 = excluded.phash2, phash3 = excluded.phash3,
          color_l = excluded.color_l, color_a = excluded.color_a, color_b = excluded.color_b
        where object_facts.source_etag is not distinct from excluded.source_etag`);
    }
    await tx.execute(sql`
      update backfill_runs set cursor = ${batch.at(-1)?.id ?? run.cursor}, processed = processed + ${found.length}, finished_at = ${more ? null : sql`now()`}
      where org_id = ${orgId} and kind = ${KIND}`);
    if (more) await enqueueJob(tx, "media.pictures", { orgId });
    return more;
  });
}
