/**
 * What each area of the API is for: the OpenAPI tags (an area is the first segment of a route,
 * see `areaOf`). A new area needs a line here; the OpenAPI test says which one is missing.
 */
export const AREA_DESCRIPTIONS: Record<string, string> = {
  me: "Who the credential belongs to: user, organization, memberships, scopes, bucket restriction and expiry.",
  "api-keys": "API keys: the bearer secrets for people and scripts. Created with scopes, an optional bucket restriction and an expiry; the secret is shown once.",
  "service-credentials":
    "Credentials for services that sign their requests (HTTP Message Signatures, HMAC-SHA256) instead of sending a bearer secret: for calls between services, where a request must not be replayable or altered on the way.",
  "oauth-grants":
    "What people allowed OAuth clients (MCP hosts) to do on their behalf: each grant's client, scopes, bucket and last use; revoking one ends its tokens at once.",
  buckets: "Buckets hold an organization's media objects. A bucket can be deleted only when it is empty. A bucket's groups of near-identical pictures (duplicates).",
  media: "Media objects: list, read, move or rename, delete (soft), set metadata, stream (302 to storage), thumbnails, similar pictures, and renders at other sizes and formats (with signed URLs for <img> tags); bulk changes and deletes of many at once.",
  trash: "Deleted media objects while their bytes are kept: list, restore (labels, metadata, thumbnail and usage come back) or purge now.",
  "media-settings": "How the organization's media is processed (whether renders keep photos' GPS position, whether uploaded images are read by OCR).",
  presign:
    "Uploads and downloads go straight to storage through short-lived presigned URLs: presign, PUT the bytes with the returned headers, confirm. Large files go in parts (multipart).",
  imports:
    "Imports by URL: the service fetches a public http(s) file into a bucket as a job (addresses checked on every redirect, size, time and type limits, quota reserved), then confirms it like an upload.",
  search: "Full-text search over keys, file names, tags, categories, metadata and the text inside files (PDFs, text files, images by OCR), with facets by tag, category and kind, and where each result matched.",
  tags: "Flat labels with slugs; an object's tags are set with `objects_set_tags`.",
  categories: "A tree of categories per organization; an object's categories are set with `objects_set_categories`.",
  objects: "Replace a media object's complete list of tags or categories.",
  sets: "Sets: variant renditions (aspect ratios, sizes, roles) around a base object, rendered by the worker.",
  storyboards: "Storyboards: ordered clips of media objects with notes.",
  usage: "Storage, egress and API-call counters of the organization, their history and the usage events behind them.",
  billing: "Plan, capacity, auto-capacity, invoices and the payment provider's portal (admin scope, whole organization).",
  webhooks: "Webhook endpoints: the organization's events delivered to your URLs, signed (Standard Webhooks), retried, with their delivery history; the events themselves are under x-webhooks.",
  audit: "The audit log: who changed what (every refused call, every call of a changing tool), by credential and address, filterable.",
  reconcile: "Compare storage with the catalogue and repair what differs (admin scope, whole organization).",
  payments: "The payment provider's webhook: unauthenticated, verified by the provider's signature. Not for API clients.",
};

export function tagsFor(areas: readonly string[]): { name: string; description: string }[] {
  return areas.map((name) => ({ name, description: AREA_DESCRIPTIONS[name] ?? "" }));
}
