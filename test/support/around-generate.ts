import type { Deps } from "../../domain/core/deps.ts";
import type { Processors } from "../../domain/ports/queue.ts";
import { processorsFor } from "../../worker/processors.ts";

/**
 * The real job processors, with each `derivatives.generate` job run through `around`, which
 * gets the job's object id and the real work to call when it chooses: tests hold a job, watch
 * it start, or stop a process inside it.
 */
export function aroundGenerate(around: (objectId: string, work: () => Promise<void>) => Promise<void>) {
  return (deps: Deps): Processors => {
    const real = processorsFor(deps);
    const generate = real["derivatives.generate"]!;
    return {
      ...real,
      "derivatives.generate": {
        ...generate,
        run: (job, run) => around((job.data as { objectId: string }).objectId, () => generate.run(job, run)),
      },
    };
  };
}
