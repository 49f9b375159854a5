import mime from "mime";
import { MEDIA_KINDS, type MediaKind } from "../../contract/media.ts";

export { MEDIA_KINDS, type MediaKind };

const THREE_D_EXTENSIONS = new Set(["glb", "gltf", "obj", "stl", "fbx", "usdz", "usd", "ply", "3mf", "dae", "3ds", "blend"]);
const GENERIC_TYPES = new Set(["application/octet-stream", "binary/octet-stream", ""]);

function extensionOf(key: string): string {
  const name = key.slice(key.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

/** The content type to sign when the client gives none: from the extension, else octet-stream. */
export function contentTypeFor(key: string): string {
  return mime.getType(key) ?? "application/octet-stream";
}

/** The kind: from the content type, falling back to the extension when it says nothing. */
export function kindOf(contentType: string | null, key: string): MediaKind {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  const fromType = kindOfType(type);
  if (fromType) return fromType;
  if (GENERIC_TYPES.has(type) || !type) {
    if (THREE_D_EXTENSIONS.has(extensionOf(key))) return "3d";
    return kindOfType(mime.getType(key) ?? "") ?? "other";
  }
  return THREE_D_EXTENSIONS.has(extensionOf(key)) ? "3d" : "other";
}

function kindOfType(type: string): MediaKind | null {
  if (type.startsWith("image/")) return "image";
  if (type.startsWith("video/")) return "video";
  if (type.startsWith("audio/")) return "audio";
  if (type === "application/pdf") return "pdf";
  if (type.startsWith("model/") || type === "application/vnd.autodesk.fbx") return "3d";
  return null;
}

/** Last path segment of a key: what people call the file name (a media view writes the same in SQL, view-rows.ts). */
export function fileNameOf(key: string): string {
  return key.slice(key.lastIndexOf("/") + 1);
}
