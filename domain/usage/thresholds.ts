import type { Db } from "../../db/client.ts";
import { emitEvent } from "../events/emit.ts";

/** Shares of the allocation whose upward crossing is announced (usage.threshold). */
const THRESHOLDS = [80, 100] as const;

/** The first share announced: below it, a change of used storage cannot cross a threshold. */
export const LOWEST_THRESHOLD_PCT = THRESHOLDS[0];

interface Level {
  usedStorage: number;
  allocatedStorage: number;
}

const atOrAbove = (l: Level, pct: number) => l.allocatedStorage > 0 && BigInt(l.usedStorage) * 100n >= BigInt(pct) * BigInt(l.allocatedStorage);

/**
 * Called wherever used or allocated storage changes, in that change's transaction (which holds
 * the usage row, so concurrent changes see each other's results and one crossing is announced
 * once). Only upward crossings are sent: falling back below a line is not news.
 */
export async function announceThresholds(tx: Db, orgId: string, before: Level, after: Level, at: Date): Promise<void> {
  for (const pct of THRESHOLDS) {
    if (atOrAbove(before, pct) || !atOrAbove(after, pct)) continue;
    await emitEvent(tx, { orgId, type: "usage.threshold", at, data: { thresholdPct: pct, usedStorage: after.usedStorage, allocatedStorage: after.allocatedStorage } });
  }
}
