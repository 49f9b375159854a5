import postgres from "postgres";
import { seededServer } from "./_seeded-server.ts";
const s = await seededServer("trace", 1000);
const base = s.app.url;
const admin = postgres("postgres://postgres@127.0.0.1:5432/postgres", { max: 1, onnotice: () => {} });
const op = process.argv[2] ?? "upload";
let n = 0;
const one = async (i: number) => {
  const init = op === "upload"
    ? { method: "POST", path: "/api/presign/upload", body: { bucketId: s.bucketId, key: `t/${i}-${Math.random()}.jpg`, contentType: "image/jpeg", size: 1000 } }
    : op === "list" ? { method: "GET", path: "/api/media?limit=100" } : { method: "GET", path: "/api/search?q=mid&limit=100" };
  const r = await fetch(base + init.path, { method: init.method, headers: { ...s.headers, "content-type": "application/json" }, body: init.body ? JSON.stringify(init.body) : undefined });
  await r.arrayBuffer(); n++;
};
const loop = async (ms: number) => { const end = Date.now() + ms; await Promise.all(Array.from({ length: 8 }, async (_, w) => { let i = w * 1e6; while (Date.now() < end) await one(i++); })); };
await loop(2000);
await admin.unsafe(`alter system set log_min_duration_statement = 0`); await admin.unsafe(`select pg_reload_conf()`);
await Bun.sleep(200);
n = 0; await admin.unsafe(`select 'MARK-START-${op}'`);
await loop(2000);
await admin.unsafe(`select 'MARK-END-${op} ${0}'`);
console.log("requests", n);
await admin.unsafe(`alter system reset log_min_duration_statement`); await admin.unsafe(`select pg_reload_conf()`);
await admin.end(); await s.stop();
