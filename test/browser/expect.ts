import { expect } from "bun:test";
import type { Locator } from "playwright-core";
import { eventually } from "../support/eventually.ts";

/** Retries an assertion until it holds (pages update asynchronously). */
export async function until(check: () => Promise<void> | void, timeoutMs = 15_000): Promise<void> {
  await eventually(
    async () => {
      await check();
      return true;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

export const containsText = (l: Locator, text: string, timeoutMs?: number) => until(async () => expect(await l.textContent()).toContain(text), timeoutMs);
export const hasText = (l: Locator, text: string, timeoutMs?: number) => until(async () => expect((await l.textContent())?.trim()).toBe(text), timeoutMs);
export const hasCount = (l: Locator, n: number, timeoutMs?: number) => until(async () => expect(await l.count()).toBe(n), timeoutMs);
