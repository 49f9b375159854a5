import { z } from "zod";
import { deleteMedia, getMedia, listMedia, MEDIA_SORTS, streamUrl, updateMetadata } from "../domain/media/media.ts";
import { deleted, id, pageInput } from "../contract/common.ts";
import { MEDIA_KINDS, mediaObject, mediaObjectList } from "../contract/media.ts";
import { presignedDownload } from "../contract/presign.ts";
import { factFilters } from "../contract/facts.ts";
import { defineTool } from "./define.ts";

/** Metadata limits (README): 64 keys, keys up to 128 characters, string values up to 2048. */
const metadata = z
  .record(z.string().min(1).max(128), z.union([z.string().max(2048), z.number(), z.boolean(), z.null()]))
  .refine((m) => Object.keys(m).length <= 64, "at most 64 keys")
  .describe("All of it: up to 64 keys; values string, number, boolean or null");

export const mediaTools = [
  defineTool({
    name: "media_list",
    title: "List media objects",
    description: "Media objects matching the filters (bucket, kind, labels, name, file facts), sorted, paged.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/media" },
    input: z.object({
      bucketId: id("Bucket").optional(),
      kind: z.enum(MEDIA_KINDS).optional().describe("Only this kind"),
      search: z.string().min(1).max(200).optional().describe("Part of the key or file name, any case"),
      folder: z.string().max(1024).regex(/^$|\/$/, "ends with /").optional().describe('Only keys directly in this folder ("a/b/"; "" the top), with its subfolders'),
      tags: z.string().max(2000).optional().describe("Comma-separated tags (slug, name or id), all required"),
      categories: z.string().max(2000).optional().describe("Comma-separated categories (slug, name or id), all required, subtrees too"),
      sort: z.enum(MEDIA_SORTS).default("created_at").describe("Sort field"),
      order: z.enum(["desc", "asc"]).default("desc").describe("Sort direction"),
      ...factFilters,
      ...pageInput,
    }),
    output: mediaObjectList,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => listMedia(deps, caller, input),
  }),
  defineTool({
    name: "media_get",
    title: "Get a media object",
    description: "One media object with its metadata, extracted info and labels.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/media/{id}" },
    input: z.object({ id: id("Media object") }),
    output: mediaObject,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => getMedia(deps, caller, input.id),
  }),
  defineTool({
    name: "media_delete",
    title: "Delete a media object",
    description: "Moves the object to the trash (out of lists, search and storage use); trash_restore brings it back.",
    scope: "delete",
    reach: "bucket",
    http: { method: "DELETE", path: "/media/{id}" },
    input: z.object({ id: id("Media object") }),
    output: deleted,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => deleteMedia(deps, caller, input.id),
  }),
  defineTool({
    name: "media_update_metadata",
    title: "Set a media object's metadata",
    description: "Replaces the object's metadata.",
    scope: "write",
    reach: "bucket",
    http: { method: "PUT", path: "/media/{id}/metadata" },
    input: z.object({ id: id("Media object"), metadata }),
    output: mediaObject,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => updateMetadata(deps, caller, input.id, input.metadata),
  }),
  defineTool({
    name: "media_stream",
    title: "Stream a media object",
    description: "A short-lived URL to play or show the object's bytes in place (presign_download: to save).",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/media/{id}/stream", status: 302 },
    input: z.object({ id: id("Media object") }),
    output: presignedDownload,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => streamUrl(deps, caller, input.id),
    restResponse: (out) => new Response(null, { status: 302, headers: { location: out.url, "cache-control": "private, no-store" } }),
  }),
];
