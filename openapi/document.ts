import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { EVENT_TYPES, eventData, eventPayloads, type EventType } from "../contract/events.ts";
import { errorCatalogue, type ErrorCode } from "../domain/core/errors.ts";
import { type AnyTool, COMMON_ERRORS, inputLocation, pathParams } from "../tools/define.ts";
import { inputJsonSchema, type JsonSchema, outputJsonSchema, toJsonSchema } from "../tools/json-schema.ts";
import { SERVER_INFO } from "../tools/registry.ts";
import { paymentWebhookPath } from "./payment-webhook.ts";
import { signedRenderPath } from "./signed-render.ts";
import { tagsFor } from "./tags.ts";

const errorEnvelope = z.object({
  error: z.object({
    code: z.enum(Object.keys(errorCatalogue) as [ErrorCode, ...ErrorCode[]]),
    message: z.string(),
    details: z.unknown().optional().describe("For validation_error: a list of { path, message }"),
    requestId: z.string().describe("Also sent as the X-Request-Id header"),
  }),
});

/** The area a tool belongs to, for grouping: the first segment of its path. */
export function areaOf(tool: AnyTool): string {
  return tool.http.path.split("/")[1] ?? "other";
}

/**
 * OpenAPI 3.0.3 for every tool, generated from the same Zod schemas the tools validate with,
 * plus the routes that are not tools (the payment webhook, signed render URLs). `serverUrl` is where clients
 * reach the API; the server fills it in per request when PUBLIC_URL is unset (`withServer`).
 */
export function openApiDocument(tools: readonly AnyTool[], serverUrl?: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, unknown> = { ErrorEnvelope: toJsonSchema(errorEnvelope, "openapi-3.0", "output", "ErrorEnvelope") };
  for (const tool of tools) {
    const path = `/api${tool.http.path}`;
    paths[path] ??= {};
    paths[path][tool.http.method.toLowerCase()] = operation(tool, schemas);
  }
  // The routes that are not tools, described beside them.
  Object.assign(paths, paymentWebhookPath(), signedRenderPath());
  const areas = [...new Set([...tools.map(areaOf), "payments"])];
  const document = {
    openapi: "3.0.3",
    info: {
      title: "Media Storage API",
      version: SERVER_INFO.version,
      description: DESCRIPTION,
    },
    // Either credential: a bearer, or a service credential's signature (docs/signed-requests.md).
    security: [{ bearerAuth: [] }, { serviceSignature: [] }],
    tags: tagsFor(areas),
    paths,
    // OpenAPI 3.0 has no `webhooks` (3.1 does): the events the service sends are described
    // under the `x-webhooks` extension, in the same shape, which Redoc and others read.
    "x-webhooks": webhooksSection(schemas),
    components: {
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "An API key's secret (64 hex characters) or a dashboard-issued JWT" },
        serviceSignature: {
          type: "apiKey",
          in: "header",
          name: "Signature",
          description:
            "For services: an HTTP Message Signature (HMAC-SHA256) of a service credential, sent with Signature-Input and Content-Digest, over the method, the target URI and the body's digest; " +
            'label sig1, parameters created, keyid, alg="hmac-sha256" and a nonce. Refused when more than 5 minutes from the service\'s clock or seen before.',
        },
      },
      parameters: { IdempotencyKey: IDEMPOTENCY_KEY },
      schemas,
    },
  };
  const typed = typeFreeNullables(document);
  return serverUrl ? withServer(typed, serverUrl) : typed;
}

/** Where the description names this server; `withServer` writes the address in. */
const SERVER = "{server}";

/** The introduction of the document (Markdown), the first thing the docs page shows. */
const DESCRIPTION = `Media objects in buckets, uploaded and downloaded directly to storage through presigned URLs.

- **[Web console](/console)**: browse, upload, search and try every operation in a browser, signed in with an API key.
- **Authentication**: \`Authorization: Bearer <secret>\` with an API key's secret (or a dashboard JWT); services may sign requests instead (HTTP Message Signatures, see the service-credentials operations). Every error is \`{ "error": { "code", "message", "details"?, "requestId" } }\`.
- **Uploads**: \`presign_upload\`, then PUT the bytes to the returned \`url\` with exactly the returned \`headers\`, then \`presign_confirm\`.

## MCP set-up

Every operation is also an MCP tool, named like its operationId, at \`/mcp\` on this server (Streamable HTTP, stateless, \`POST\` only); \`tools/list\` shows the tools the credential may use. A client configuration:

\`\`\`json
{
  "mcpServers": {
    "media": {
      "type": "http",
      "url": "${SERVER}/mcp",
      "headers": { "Authorization": "Bearer <your secret>" }
    }
  }
}
\`\`\`

Desktop agents that launch local servers can run \`media mcp\` (the command-line client's stdio bridge) with \`MEDIA_URL\` and \`MEDIA_API_KEY\` set. Every operation is also a \`media\` command (\`media buckets list\`, \`media search sunset\`).`;

/** The document with its `servers` entry: PUBLIC_URL when set, else the origin the request came to. */
export function withServer(document: Record<string, unknown>, url: string): Record<string, unknown> {
  const server = url.replace(/\/+$/, "");
  const info = document.info as { description: string };
  return { ...document, info: { ...info, description: info.description.replaceAll(SERVER, server) }, servers: [{ url: server, description: "This service" }] };
}

const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Any unique string (1..255 characters). A retry with the same key, method and URL from the same credential within 24 hours replays the first 2xx answer (with `idempotency-replayed: true`) instead of running again.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

function operation(tool: AnyTool, schemas: Record<string, unknown>): Record<string, unknown> {
  const input = hoistDefinitions(inputJsonSchema(tool, "openapi-3.0"), tool.name, schemas);
  const properties = input.properties ?? {};
  const required = new Set(input.required ?? []);
  const inPath = new Set(pathParams(tool.http.path));
  const parameters: unknown[] = [...inPath].map((name) => ({ name, in: "path", required: true, schema: properties[name] ?? { type: "string" } }));
  let requestBody: unknown;
  const rest = Object.entries(properties).filter(([name]) => !inPath.has(name));
  if (inputLocation(tool) === "query") {
    for (const [name, schema] of rest) {
      parameters.push({ name, in: "query", required: required.has(name), schema, ...(schema.description ? { description: schema.description } : {}) });
    }
  } else {
    const body: JsonSchema = { ...input, properties: Object.fromEntries(rest) };
    const bodyRequired = (input.required ?? []).filter((n) => !inPath.has(n));
    if (bodyRequired.length > 0) body.required = bodyRequired;
    else delete body.required;
    requestBody = { required: bodyRequired.length > 0, content: { "application/json": { schema: body } } };
  }
  if (tool.http.method !== "GET") parameters.push({ $ref: "#/components/parameters/IdempotencyKey" });
  const status = String(tool.http.status ?? 200);
  return {
    operationId: tool.name,
    summary: tool.title,
    description: tool.description,
    tags: [areaOf(tool)],
    "x-required-scope": tool.scope,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: {
      [status]: tool.restResponse && status.startsWith("3")
        ? {
            description: "Found: `Location` is a short-lived presigned storage URL; follow it to read the bytes (clients that follow redirects do so on their own).",
            headers: { Location: { description: "The presigned URL", schema: { type: "string", format: "uri" } } },
          }
        : tool.http.produces
          ? {
              description: "The bytes",
              headers: { ETag: { schema: { type: "string" } }, "Cache-Control": { schema: { type: "string" } } },
              content: { [tool.http.produces]: { schema: { type: "string", format: "binary" } } },
            }
          : { description: "Success", content: { "application/json": { schema: hoistDefinitions(outputJsonSchema(tool, "openapi-3.0"), tool.name, schemas) } } },
      ...(tool.http.produces ? { "304": { description: "Not modified: If-None-Match names the current ETag" } } : {}),
      ...errorResponses(tool),
    },
  };
}

/**
 * Errors the HTTP layer adds to what the tool declares: a JSON body that does not parse or is
 * too large, an Idempotency-Key that is malformed or still running, a backing service down.
 */
function httpErrors(tool: AnyTool): ErrorCode[] {
  const codes: ErrorCode[] = ["unavailable"];
  if (inputLocation(tool) === "body") codes.push("bad_request", "payload_too_large");
  if (tool.http.method !== "GET") codes.push("bad_request", "idempotency_in_flight");
  return codes;
}

function errorResponses(tool: AnyTool): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...COMMON_ERRORS, ...tool.errors, ...httpErrors(tool)])) {
    const status = errorCatalogue[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, unknown> = {};
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: codes.map((c) => `\`${c}\`: ${errorCatalogue[c].description}`).join(" "),
      // The codes this operation can answer with this status, for clients that switch on them.
      "x-error-codes": codes,
      ...(status === 429 ? { headers: { "Retry-After": { description: "Seconds to wait", schema: { type: "integer" } } } } : {}),
      content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
    };
  }
  return out;
}

/**
 * Zod puts the contract's named resources (`meta({ id })`, see contract/) and recursive schemas
 * under `definitions` with `#/definitions/...` references, which OpenAPI resolves from the
 * document root. They move to components.schemas: named by their id, or after the tool when
 * Zod made the name up. Every tool that uses a resource must describe it the same way.
 */
function hoistDefinitions(schema: JsonSchema, toolName: string, schemas: Record<string, unknown>): JsonSchema {
  const definitions = schema.definitions as Record<string, unknown> | undefined;
  if (!definitions) return schema;
  const nameOf = (key: string) => (key.startsWith("__") ? `${toolName}${key}` : key);
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (!value || typeof value !== "object") return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) =>
        k === "$ref" && typeof v === "string" && v.startsWith("#/definitions/")
          ? [k, `#/components/schemas/${nameOf(v.slice("#/definitions/".length))}`]
          : [k, rewrite(v)],
      ),
    );
  };
  for (const [key, definition] of Object.entries(definitions)) {
    const name = nameOf(key);
    const body = rewrite(definition);
    if (name in schemas && !isDeepStrictEqual(schemas[name], body)) {
      throw new Error(`Two schemas are named ${name} (${toolName} describes it differently): name one of them otherwise`);
    }
    schemas[name] = body;
  }
  const { definitions: _, ...rest } = schema;
  return rewrite(rest) as JsonSchema;
}

/**
 * Zod writes a nullable reference as `{ nullable: true, allOf: [{ $ref }] }`. OpenAPI 3.0 gives
 * `nullable` meaning only beside a `type`, so generators drop the null (and Redocly refuses it):
 * the type of the referenced schema is written beside it.
 */
function typeFreeNullables<T>(document: T): T {
  const schemas = (document as { components: { schemas: Record<string, JsonSchema> } }).components.schemas;
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit);
    if (!value || typeof value !== "object") return value;
    const node = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, visit(v)])) as JsonSchema;
    const only = Array.isArray(node.allOf) && node.allOf.length === 1 ? (node.allOf[0] as { $ref?: string }) : undefined;
    if (node.nullable === true && node.type === undefined && only?.$ref?.startsWith("#/components/schemas/")) {
      const target = schemas[only.$ref.slice("#/components/schemas/".length)];
      if (typeof target?.type === "string") node.type = target.type;
    }
    return node;
  };
  return visit(document) as T;
}

const SIGNATURE_HEADERS = [
  { name: "webhook-id", description: "The event's id: the same on every attempt and redelivery, so receivers can drop repeats" },
  { name: "webhook-timestamp", description: "When this attempt was sent, in Unix seconds; refuse ones far from your clock" },
  {
    name: "webhook-signature",
    description:
      "Space-separated `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the endpoint's secret (the base64 after `whsec_`); two during a rotation. Standard Webhooks libraries verify it.",
  },
].map((h) => ({ ...h, in: "header", required: true, schema: { type: "string" } }));

/** One entry per event type an endpoint may receive: the body, the signature headers, what to answer. */
function webhooksSection(schemas: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const type of EVENT_TYPES as EventType[]) {
    const schema = hoistDefinitions(toJsonSchema(eventPayloads[type], "openapi-3.0", "output", `event:${type}`), `event_${type}`, schemas);
    out[type] = {
      post: {
        operationId: `event_${type.replace(/\./g, "_")}`,
        summary: type,
        description: `${eventData[type].description ?? type}. Sent to the organization's webhook endpoints that subscribe to it, at least once, retried with backoff over about three days.`,
        parameters: SIGNATURE_HEADERS,
        requestBody: { required: true, content: { "application/json": { schema } } },
        responses: { "2XX": { description: "Received: any 2xx answer ends the delivery; anything else (or no answer within the deadline) is retried" } },
      },
    };
  }
  return out;
}
