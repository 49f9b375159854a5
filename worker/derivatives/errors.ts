/**
 * A failure whose message is fit for the user: it is recorded on the derivative and shown by
 * GET /api/media/{id}/thumbnail (thumbnail_unavailable). Anything else is logged and recorded
 * as an internal error, so no stack trace or temporary path reaches a client.
 */
export class MediaError extends Error {
  override readonly name = "MediaError";
}

/** No derivative can be made here, and retrying will not change that (a tool is missing, the file is too large). */
export class Unsupported extends Error {
  override readonly name = "Unsupported";
}
