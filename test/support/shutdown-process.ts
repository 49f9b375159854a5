/**
 * `npm start` as app/main.ts runs it (same services, same signal handling), plus two things a
 * shutdown test needs: GET /test/slow?ms=N prints "slow request started" and answers after N
 * ms, and each derivative job prints "started <objectId>", waits HOLD_MS (forever when unset),
 * does its work and prints "finished <objectId>". The exit status is printed as "exit <code>"
 * before exiting.
 */
import { createHttpApp } from "../../app/http.ts";
import { loadConfig } from "../../app/config.ts";
import { createServices } from "../../app/services.ts";
import { stopOnSignals } from "../../app/shutdown.ts";
import { aroundGenerate } from "./around-generate.ts";

const holdMs = process.env.HOLD_MS ? Number(process.env.HOLD_MS) : Number.POSITIVE_INFINITY;
const config = loadConfig();
const services = await createServices(config, {
  processors: aroundGenerate(async (objectId, work) => {
    process.stdout.write(`started ${objectId}\n`);
    await (Number.isFinite(holdMs) ? Bun.sleep(holdMs) : new Promise(() => {}));
    await work();
    process.stdout.write(`finished ${objectId}\n`);
  }),
});
const app = createHttpApp(services, {
  extraRoutes: (app) => {
    app.get("/test/slow", async ({ request }) => {
      process.stdout.write("slow request started\n");
      await Bun.sleep(Number(new URL(request.url).searchParams.get("ms") ?? "1000"));
      return new Response("slow done");
    });
  },
}).listen({ hostname: "127.0.0.1", port: config.port });
stopOnSignals({
  services,
  log: services.deps.log,
  what: "server",
  stopServing: () => app.stop(false),
  exit: (code) => {
    process.stdout.write(`exit ${code}\n`);
    process.exit(code);
  },
});
process.stdout.write(`ready http://127.0.0.1:${app.server!.port} ops ${services.opsPort}\n`);
