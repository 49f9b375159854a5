import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { EVENT_TYPES, eventData, eventPayloads, type EventType } from "../contract/events.ts";
import { errorCatalogue, type ErrorCode } from "../domain/core/errors.ts";
import { type AnyTool, COMMON_ERRORS, inputLocation, pathParams } from "../tools/define.ts";
import { inputJsonSchema, type JsonSchema, outputJsonSchema, toJsonSchema } from "../tools/json-schema.ts";
import { SERVER_INFO } from "../tools/registry.ts";

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

/** OpenAPI 3.0.3 for every tool, generated from the same Zod schemas the tools validate with. */
export function openApiDocument(tools: readonly AnyTool[], serverUrl?: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, unknown> = { ErrorEnvelope: toJsonSchema(errorEnvelope, "openapi-3.0", "output", "ErrorEnvelope") };
  for (const tool of tools) {
    const path = `/api${tool.http.path}`;
    paths[path] ??= {};
    paths[path][tool.http.method.toLowerCase()] = operation(tool, schemas);
  }
  return {
    openapi: "3.0.3",
    info: {
      title: "Media Storage API",
      version: SERVER_INFO.version,
      description:
        "Media objects in buckets, uploaded and downloaded directly to storage through presigned URLs. " +
        "Every operation is also an MCP tool at /mcp with the same name as its operationId.",
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    security: [{ bearerAuth: [] }],
    tags: [...new Set(tools.map(areaOf))].map((name) => ({ name })),
    paths,
    // OpenAPI 3.0 has no `webhooks` (3.1 does): the events the service sends are described
    // under the `x-webhooks` extension, in the same shape, which Redoc and others read.
    "x-webhooks": webhooksSection(schemas),
    components: {
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "An API key's secret (64 hex characters) or a dashboard-issued JWT" },
      },
      schemas,
    },
  };
}

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
        ? { description: "Redirect to the resource", headers: { Location: { schema: { type: "string" } } } }
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

function errorResponses(tool: AnyTool): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...COMMON_ERRORS, ...tool.errors])) {
    const status = errorCatalogue[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, unknown> = {};
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: codes.map((c) => `\`${c}\`: ${errorCatalogue[c].description}`).join(" "),
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
