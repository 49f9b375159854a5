import { renderParams } from "../contract/render.ts";
import { type JsonSchema, toJsonSchema } from "../tools/json-schema.ts";

/**
 * GET /api/render/{id} (http/render.ts) takes no credential: its signed query is the
 * permission (URLs come from media_render_url). It is not a tool, so nothing derives it: it is
 * described here, its render parameters from the same schema that checks them.
 */
export function signedRenderPath(): Record<string, unknown> {
  const params = toJsonSchema(renderParams, "openapi-3.0", "input", "signed-render");
  const error = (description: string) => ({ description, content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } } });
  const query = Object.entries((params.properties ?? {}) as Record<string, JsonSchema>).map(([name, schema]) => ({
    name,
    in: "query",
    required: false,
    schema,
    ...(schema.description ? { description: schema.description as string } : {}),
  }));
  return {
    "/api/render/{id}": {
      get: {
        operationId: "media_render_signed",
        summary: "A render through a signed URL",
        description:
          "For <img> tags and other clients without a credential: the URL from media_render_url, whose signature (made with the organization's key over the object and every parameter) is the permission until `expires`. " +
          "Public caches may keep the answer until then. Change nothing in the query: any change breaks the signature.",
        tags: ["media"],
        security: [],
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" }, description: "Media object id (UUID)" },
          ...query,
          { name: "expires", in: "query", required: true, schema: { type: "integer" }, description: "Unix seconds after which the URL stops working" },
          { name: "signature", in: "query", required: true, schema: { type: "string" }, description: "The URL's HMAC" },
        ],
        responses: {
          "200": {
            description: "The rendered image",
            headers: { ETag: { schema: { type: "string" } }, "Cache-Control": { schema: { type: "string" } } },
            content: { "image/*": { schema: { type: "string", format: "binary" } } },
          },
          "304": { description: "Not modified: If-None-Match names the current ETag" },
          "400": error("`validation_error`: a render parameter out of range"),
          "403": error("`forbidden`: the signature does not match, or the URL has expired"),
          "404": error("`not_found`, `thumbnail_pending`, `thumbnail_unavailable`: no such object, or nothing to render from yet"),
          "429": error("`rate_limited`: too many requests from this address; see Retry-After"),
        },
      },
    },
  };
}
