import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import type { MediaSettings } from "../../contract/render.ts";
import { mediaSettings } from "../../db/schema/index.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { installedOcrLanguages } from "../search/ocr-models.ts";

/** An organization's media settings; defaults until it changes one. */
export async function getMediaSettings(deps: Deps, orgId: string): Promise<MediaSettings> {
  const [row] = await deps.db
    .select({ stripLocation: mediaSettings.stripLocation, ocrOnUpload: mediaSettings.ocrOnUpload, ocrLanguages: mediaSettings.ocrLanguages })
    .from(mediaSettings)
    .where(eq(mediaSettings.orgId, orgId));
  return { stripLocation: row?.stripLocation ?? true, ocrOnUpload: row?.ocrOnUpload ?? false, ocrLanguages: row?.ocrLanguages ?? ["eng"], ocrLanguagesInstalled: installedOcrLanguages() };
}

/** Changes the settings given; the others keep their values. OCR languages must have their model installed. */
export async function updateMediaSettings(deps: Deps, orgId: string, change: { stripLocation?: boolean | undefined; ocrOnUpload?: boolean | undefined; ocrLanguages?: string[] | undefined }): Promise<MediaSettings> {
  const set = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)) as Partial<typeof mediaSettings.$inferInsert>;
  if (change.ocrLanguages) {
    const installed = installedOcrLanguages();
    const missing = change.ocrLanguages.filter((l) => !installed.includes(l));
    if (missing.length) throw errors.validation([{ path: "ocrLanguages", message: `No OCR model installed for ${missing.join(", ")}; installed: ${installed.join(", ")}` }]);
    set.ocrLanguages = [...new Set(change.ocrLanguages)];
  }
  const now = deps.clock.now();
  await deps.db
    .insert(mediaSettings)
    .values({ orgId, ...set, renderSecret: newSigningKey(), updatedAt: now })
    .onConflictDoUpdate({ target: mediaSettings.orgId, set: { ...set, updatedAt: now } });
  return getMediaSettings(deps, orgId);
}

/** The key that signs an organization's render URLs: 256 random bits, never shown. */
export const newSigningKey = () => randomBytes(32).toString("hex");
