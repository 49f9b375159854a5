// Object tag sets: from the x-amz-tagging header (URL query encoding) or a
// <Tagging> XML body, validated with S3's limits.

import { Errors } from "./errors.ts";
import { childrenNamed, childText, parseXml, xmlDocument } from "./xml.ts";

export type TagSet = [string, string][];

const TAG_CHARS = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;

export function validateTags(tags: TagSet): TagSet {
  if (tags.length > 10) throw Errors.invalidTag("Object tags cannot be greater than 10");
  const seen = new Set<string>();
  for (const [k, v] of tags) {
    if (k.length === 0) throw Errors.invalidTag("The TagKey you have provided is invalid");
    if ([...k].length > 128) throw Errors.invalidTag("The TagKey you have provided is too long, max 128");
    if ([...v].length > 256) throw Errors.invalidTag("The TagValue you have provided is too long, max 256");
    if (!TAG_CHARS.test(k)) throw Errors.invalidTag("The TagKey you have provided is invalid");
    if (!TAG_CHARS.test(v)) throw Errors.invalidTag("The TagValue you have provided is invalid");
    if (k.toLowerCase().startsWith("aws:")) throw Errors.invalidTag("Your TagKey cannot be prefixed with aws:");
    if (seen.has(k)) throw Errors.invalidTag("Cannot provide multiple Tags with the same key");
    seen.add(k);
  }
  return tags;
}

export function parseTaggingHeader(value: string): TagSet {
  const tags: TagSet = [];
  for (const part of value.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const rawK = eq < 0 ? part : part.slice(0, eq);
    const rawV = eq < 0 ? "" : part.slice(eq + 1);
    try {
      tags.push([decodeURIComponent(rawK.replace(/\+/g, " ")), decodeURIComponent(rawV.replace(/\+/g, " "))]);
    } catch {
      throw Errors.invalidArgument("The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.", "x-amz-tagging", value);
    }
  }
  return validateTags(tags);
}

export function parseTaggingXml(body: string): TagSet {
  const root = parseXml(body);
  if (root.name !== "Tagging") throw Errors.malformedXML();
  const set = root.children.find((c) => c.name === "TagSet");
  if (!set) throw Errors.malformedXML();
  const tags: TagSet = childrenNamed(set, "Tag").map((t) => {
    const k = childText(t, "Key");
    const v = childText(t, "Value");
    if (k === undefined || v === undefined) throw Errors.malformedXML();
    return [k, v];
  });
  return validateTags(tags);
}

export function taggingXml(tags: TagSet): string {
  return xmlDocument("Tagging", { TagSet: { Tag: tags.map(([Key, Value]) => ({ Key, Value })) } });
}
