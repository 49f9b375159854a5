/**
 * A server for the load benchmarks, in a process of its own; started by bench/_load.ts
 * (startTarget). Input: BENCH_TARGET (JSON). Prints `{"port":N}` once listening; SIGTERM stops it.
 *
 * - mode "app": the real server as `npm start` builds it (createServices + createHttpApp) on the
 *   given environment, with the first organization's admin key bootstrapped from `secret`.
 * - mode "json": a bare Bun.serve that reads the request body and answers `body`, the ceiling
 *   for any route that returns that JSON.
 * - mode "sql": a bare Bun.serve whose GET /<anything>/<id> runs `queries` (SQL captured from
 *   the real route, the object id replaced by the request's) through postgres.js with the
 *   app's pool size, as server-side prepared statements, the first alone and the rest together as the route does, and answers
 *   their rows as JSON.
 */
import postgres from "postgres";

const job = JSON.parse(process.env.BENCH_TARGET!) as {
  mode: "app" | "json" | "sql";
  env?: Record<string, string>;
  secret?: string;
  body?: string;
  databaseUrl?: string;
  poolSize?: number;
  /** For "sql": the captured statements; params equal to `idParam` are replaced by the request's id. */
  queries?: { sql: string; params: unknown[] }[];
  idParam?: string;
};

let stop: () => Promise<void>;

if (job.mode === "app") {
  const { loadConfig } = await import("../app/config.ts");
  const { createServices } = await import("../app/services.ts");
  const { createHttpApp } = await import("../app/http.ts");
  const { bootstrap } = await import("../domain/access/identity.ts");
  const services = await createServices(loadConfig(job.env));
  await bootstrap(services.deps, job.secret!);
  const app = createHttpApp(services).listen({ hostname: "127.0.0.1", port: 0 });
  ready(app.server!.port!);
  stop = async () => {
    await app.stop(true);
    await services.close();
  };
} else if (job.mode === "json") {
  const body = job.body!;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      await req.text();
      return new Response(body, { headers: { "content-type": "application/json" } });
    },
  });
  ready(server.port!);
  stop = async () => void server.stop(true);
} else {
  const sql = postgres(job.databaseUrl!, { max: job.poolSize ?? 10, onnotice: () => {} });
  const [first, ...rest] = job.queries!;
  // Prepared on the server, as postgres.js does for its own tagged queries: the best a bare route could do.
  const run = (q: { sql: string; params: unknown[] }, id: string) => sql.unsafe(q.sql, q.params.map((p) => (p === job.idParam ? id : p)) as never[], { prepare: true });
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = req.url;
      const id = url.slice(url.lastIndexOf("/") + 1);
      const [row] = await run(first!, id);
      if (!row) return Response.json({ error: { code: "not_found", message: "Media object not found" } }, { status: 404 });
      const others = await Promise.all(rest.map((q) => run(q, id)));
      return Response.json({ ...row, related: others });
    },
  });
  ready(server.port!);
  stop = async () => {
    server.stop(true);
    await sql.end({ timeout: 5 });
  };
}

function ready(port: number) {
  process.stdout.write(`${JSON.stringify({ port })}\n`);
}

process.on("SIGTERM", () => {
  void stop().finally(() => process.exit(0));
});
