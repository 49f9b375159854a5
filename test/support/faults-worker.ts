/**
 * `npm run worker`, except that each derivative job, once its real work is done (thumbnail
 * stored and recorded), prints "generated <objectId>" and never returns: a SIGKILL then lands
 * in the worst window, after the effect and before BullMQ hears the job is complete.
 */
import { loadConfig } from "../../app/config.ts";
import { createServices } from "../../app/services.ts";
import { aroundGenerate } from "./around-generate.ts";

await createServices(loadConfig(), {
  role: "worker",
  processors: aroundGenerate(async (objectId, work) => {
    await work();
    process.stdout.write(`generated ${objectId}\n`);
    await new Promise(() => {});
  }),
});
process.stdout.write("ready worker\n");
