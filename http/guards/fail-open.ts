import type { Logger } from "../../domain/ports/log.ts";

/**
 * Runs store operations so that a failing store never fails the request: the operation's
 * result is replaced by `undefined` and the request goes on unguarded. The first failure of
 * an outage is logged, and the first success after it; the failures in between are not,
 * so a Redis outage under load is two log lines, not one per request.
 */
export class FailOpen {
  private down = false;

  constructor(
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  async run<T>(op: () => Promise<T>, requestId: string): Promise<T | undefined> {
    try {
      const result = await op();
      this.up();
      return result;
    } catch (err) {
      this.failed(err, requestId);
      return undefined;
    }
  }

  /** For an operation run elsewhere on this store's behalf (see GuardStores.takeAll). */
  up(): void {
    if (!this.down) return;
    this.down = false;
    this.log.info(`${this.what} store reachable again`);
  }

  failed(err: unknown, requestId: string): void {
    if (this.down) return;
    this.down = true;
    this.log.warn(`${this.what} store unreachable; requests proceed without it`, { requestId, error: err instanceof Error ? err.message : String(err) });
  }
}
