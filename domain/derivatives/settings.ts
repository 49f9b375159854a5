import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { mediaSettings } from "../../db/schema/index.ts";
import type { Deps } from "../core/deps.ts";

/** An organization's media settings; defaults until it changes one. */
export async function getMediaSettings(deps: Deps, orgId: string): Promise<{ stripLocation: boolean }> {
  const [row] = await deps.db.select({ stripLocation: mediaSettings.stripLocation }).from(mediaSettings).where(eq(mediaSettings.orgId, orgId));
  return { stripLocation: row?.stripLocation ?? true };
}

export async function updateMediaSettings(deps: Deps, orgId: string, change: { stripLocation: boolean }): Promise<{ stripLocation: boolean }> {
  const now = deps.clock.now();
  await deps.db
    .insert(mediaSettings)
    .values({ orgId, stripLocation: change.stripLocation, renderSecret: newSigningKey(), updatedAt: now })
    .onConflictDoUpdate({ target: mediaSettings.orgId, set: { stripLocation: change.stripLocation, updatedAt: now } });
  return getMediaSettings(deps, orgId);
}

/** The key that signs an organization's render URLs: 256 random bits, never shown. */
export const newSigningKey = () => randomBytes(32).toString("hex");
