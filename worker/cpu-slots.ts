/**
 * The decoding slots of one worker process: WORKER_CONCURRENCY pictures (or pages, or frames)
 * are decoded at once, whatever the number of `cpu` jobs in hand. The queue hands a process
 * more jobs than that (`cpuJobsInHand`, domain/core/jobs.ts), so one job's storage and
 * database waits (reading the object, writing the thumbnail, recording it) overlap another's
 * decoding instead of leaving a core idle. Taken in arrival order; which organization's job
 * comes next was decided fairly when the queue handed it over (worker/fair-share.ts).
 */
export class CpuSlots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Runs `work` once a slot is free, and frees the slot when it ends, however it ends. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      // Handed straight to the next in line, so a newcomer cannot take it first.
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }

  /** Slots taken now (tests, diagnostics). */
  get busy(): number {
    return this.size - this.free;
  }
}
