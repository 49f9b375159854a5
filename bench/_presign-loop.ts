/**
 * The floor of bench/presign.ts, in its own process: what POST /api/presign/upload must do
 * against the database and Redis, from a bare loop with no HTTP, no validation, no signing.
 * `concurrency` loops, each: the guards' one Redis round trip (the rate limit script that
 * also claims the Idempotency-Key), the bucket check, and the reservation statement (the
 * quota UPDATE on the organization's usage row and the INSERT of the reservation, as
 * domain/uploads.ts sends it), with the app's pool size; postgres.js prepares them. Input: BENCH_LOOP (JSON). Output: one JSON line (LoadResult).
 */
import Redis from "ioredis";
import postgres from "postgres";
import { gcraParams } from "../domain/guards/rate-limit.ts";
import { redisGuardStores } from "../http/guards/stores/redis.ts";

const job = JSON.parse(process.env.BENCH_LOOP!) as {
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  orgId: string;
  bucketId: string;
  concurrency: number;
  seconds: number;
  warmupSeconds: number;
  poolSize: number;
  tag: string;
};

const sql = postgres(job.databaseUrl, { max: job.poolSize, onnotice: () => {} });
const redis = new Redis(job.redisUrl);
const stores = redisGuardStores(redis, job.prefix);
const params = gcraParams({ limit: 1_000_000_000, windowMs: 60_000 });
let n = 0;

async function once() {
  const id = `${job.tag}-${++n}`;
  const now = Date.now();
  await stores.takeAll([{ key: `loop:${job.orgId}`, params }], now * 1000, { id, owner: id, nowMs: now, leaseMs: 60_000 });
  const [bucket] = await sql`select * from buckets where id = ${job.bucketId} and org_id = ${job.orgId} limit 1`;
  if (!bucket) throw new Error("no bucket");
  // What domain/media/upload-reservations.ts does for one request alone, as one statement.
  const key = `loop/${id}.jpg`;
  const [reserved] = await sql`
      with durability as (select set_config('synchronous_commit', 'off', true)),
      reserved as (
        update org_usage set reserved_storage = reserved_storage + ${1000}, updated_at = now()
        where org_id = ${job.orgId} and used_storage + reserved_storage + ${1000} <= allocated_storage
        returning org_id
      ),
      ins as (
        insert into upload_reservations (org_id, bucket_id, key, bytes, content_type, tags, expires_at, created_at)
        select reserved.org_id, ${job.bucketId}, ${key}, ${1000}, ${"image/jpeg"},
          array(select jsonb_array_elements_text(${"[]"}::text::jsonb)),
          ${new Date(now + 3_900_000).toISOString()}::timestamptz, ${new Date(now).toISOString()}::timestamptz
        from reserved, durability
        returning id
      )
      select ins.id, live.etag as live_etag,
        trash.etag as trash_etag, coalesce(trash.purging, false) as purging,
        exists (select 1 from upload_reservations u where u.bucket_id = ${job.bucketId} and u.key = ${key}) as pending
      from ins
      left join (select id, etag from media_objects where bucket_id = ${job.bucketId} and key = ${key} and deleted_at is null) live on true
      -- Only without a live object: the latest deleted one's bytes are what the key holds, unless a purge is removing them.
      left join lateral (
        select (array_agg(o.etag order by o.deleted_at desc) filter (where o.purge_queued_at is null))[1] as etag,
          bool_or(o.purge_queued_at is not null) as purging
        from media_objects o where o.bucket_id = ${job.bucketId} and o.key = ${key} and o.deleted_at is not null
      ) trash on live.id is null`;
  if (!reserved) throw new Error("quota");
}

const latencies: number[] = [];
let cpuAtWarmEnd: NodeJS.CpuUsage | null = null;
const warmEnd = performance.now() + job.warmupSeconds * 1000;
const end = warmEnd + job.seconds * 1000;
await Promise.all(
  Array.from({ length: job.concurrency }, async () => {
    for (;;) {
      const t = performance.now();
      if (t >= end) return;
      if (t >= warmEnd && !cpuAtWarmEnd) cpuAtWarmEnd = process.cpuUsage();
      await once();
      if (t >= warmEnd) latencies.push(performance.now() - t);
    }
  }),
);
const s = latencies.sort((a, b) => a - b);
const at = (p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
const cpu = process.cpuUsage(cpuAtWarmEnd ?? undefined);
process.stdout.write(JSON.stringify({ requests: s.length, rps: s.length / job.seconds, p50: at(50), p95: at(95), p99: at(99), cpuMs: (cpu.user + cpu.system) / 1000 / s.length }));
await sql.end({ timeout: 5 });
redis.disconnect();
