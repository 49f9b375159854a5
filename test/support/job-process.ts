/**
 * A real server or worker process for shutdown and crash tests: `npm start` (ROLE=server) or
 * `npm run worker` (ROLE=worker), except that each derivative job first prints
 * "started <objectId>" and then waits HOLD_MS (forever when unset) before doing its work.
 */
import { loadConfig } from "../../app/config.ts";
import { createServices, type Role } from "../../app/services.ts";
import { createApp } from "../../http/server.ts";
import { aroundGenerate } from "./around-generate.ts";

const role = (process.env.ROLE ?? "server") as Role;
const holdMs = process.env.HOLD_MS ? Number(process.env.HOLD_MS) : Number.POSITIVE_INFINITY;
const config = loadConfig();

const services = await createServices(config, {
  role,
  processors: aroundGenerate(async (objectId, work) => {
    process.stdout.write(`started ${objectId}\n`);
    await (Number.isFinite(holdMs) ? Bun.sleep(holdMs) : new Promise(() => {}));
    await work();
    process.stdout.write(`finished ${objectId}\n`);
  }),
});
const app = role === "server" ? createApp({ deps: services.deps }).listen({ hostname: "127.0.0.1", port: config.port }) : null;
process.stdout.write(`ready ${app ? `http://127.0.0.1:${app.server!.port}` : "worker"}\n`);

process.on("SIGTERM", async () => {
  await app?.stop();
  await services.close();
  process.stdout.write("closed\n");
  process.exit(0);
});
