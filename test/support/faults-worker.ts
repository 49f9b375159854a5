/**
 * `npm run worker`, except that each derivative job, once its real work is done (thumbnail
 * stored and recorded), prints "generated <objectId>" and never returns: a SIGKILL then lands
 * in the worst window, after the effect and before BullMQ hears the job is complete.
 */
import { loadConfig } from "../../app/config.ts";
import { createServices } from "../../app/services.ts";
import type { Processors } from "../../domain/ports/queue.ts";
import { processorsFor } from "../../worker/processors.ts";

await createServices(loadConfig(), {
  role: "worker",
  processors: (deps): Processors => {
    const real = processorsFor(deps);
    const generate = real["derivatives.generate"]!;
    return {
      ...real,
      "derivatives.generate": {
        ...generate,
        run: async (job, run) => {
          await generate.run(job, run);
          process.stdout.write(`generated ${(job.data as { objectId: string }).objectId}\n`);
          await new Promise(() => {});
        },
      },
    };
  },
});
process.stdout.write("ready worker\n");
