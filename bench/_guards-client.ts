export {};
/**
 * The sequential client of bench/guards.ts, in its own process. It goes round the servers
 * request by request (the order rotating every round), so all see the same moment of this
 * shared machine, and reports every latency in milliseconds.
 * Input: BENCH_CLIENT (JSON: targets { name: base URL }, mode "post" | "get", path, auth, requests, warmup, tag).
 */
interface Job {
  targets: Record<string, string>;
  mode: "post" | "get";
  path: string;
  auth: string;
  requests: number;
  warmup: number;
  tag: string;
}

const job = JSON.parse(process.env.BENCH_CLIENT!) as Job;
const names = Object.keys(job.targets);
const out: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
let n = 0;

async function once(base: string): Promise<number> {
  const id = `${job.tag}-${++n}`;
  const init: RequestInit =
    job.mode === "post"
      ? { method: "POST", headers: { authorization: job.auth, "content-type": "application/json", "idempotency-key": id }, body: `{"name":"${id}"}` }
      : { headers: { authorization: job.auth } };
  const started = performance.now();
  const res = await fetch(`${base}${job.path}`, init);
  await res.arrayBuffer();
  const took = performance.now() - started;
  if (res.status >= 300) throw new Error(`${res.status} from ${base}${job.path}`);
  return took;
}

for (let i = 0; i < job.warmup + job.requests; i++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(i + k) % names.length]!;
    const took = await once(job.targets[name]!);
    if (i >= job.warmup) out[name]!.push(took);
  }
}
process.stdout.write(JSON.stringify(out));
