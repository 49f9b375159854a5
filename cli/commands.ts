import { type AnyTool, pathParams } from "../tools/define.ts";
import { strictInput, zodDetails } from "../tools/invoke.ts";
import { inputJsonSchema, outputJsonSchema } from "../tools/json-schema.ts";
import { registry } from "../tools/registry.ts";
import { bucketFields, resolveBucketId } from "./buckets.ts";
import { ApiError } from "./client.ts";
import { type Command, type Context, EXIT } from "./context.ts";
import { downloadCommand } from "./download.ts";
import { type FlagSpec, flagsFromSchema, kebab, type ParsedArgs, type PositionalSpec, UsageError } from "./flags.ts";
import { loginCommands } from "./login.ts";
import { mcpCommand } from "./mcp-bridge.ts";
import { render, renderJson } from "./output.ts";
import { uploadCommand } from "./upload.ts";

/**
 * Every registry tool is a command: `<area> <verb>`, the area being the first segment of
 * its REST path when the tool's name starts with it (`api_keys_create` at /api-keys ->
 * `api-keys create`), else the first word of its name. A tool named like its area alone
 * (`search` at /search) is the area command itself. Any tool also answers to its name
 * (`media buckets_list`).
 */
export function commandPath(tool: Pick<AnyTool, "name" | "http">): string[] {
  const segment = (tool.http.path.split("/").find((s) => s !== "" && !s.startsWith("{")) ?? "").replace(/-/g, "_");
  if (segment && tool.name === segment) return [kebab(segment)];
  if (segment && tool.name.startsWith(`${segment}_`)) return [kebab(segment), kebab(tool.name.slice(segment.length + 1))];
  const cut = tool.name.indexOf("_");
  return cut < 0 ? [tool.name] : [kebab(tool.name.slice(0, cut)), kebab(tool.name.slice(cut + 1))];
}

/** A list tool: paginated input and a `{ data, total, hasMore }` output, so `--all` can walk it. */
function isPaginated(tool: AnyTool): boolean {
  const input = inputJsonSchema(tool).properties ?? {};
  const output = outputJsonSchema(tool).properties ?? {};
  return "limit" in input && "offset" in input && "data" in output && "hasMore" in output;
}

/**
 * A tool as a command. Its flags come from the input schema's JSON Schema, built only when
 * the command runs or shows its help, so start-up does not pay for every tool's schema.
 */
export function toolCommand(tool: AnyTool): Command {
  const params = pathParams(tool.http.path);
  let built: { positionals: PositionalSpec[]; fields: FlagSpec[]; flags: FlagSpec[]; bucketFields: string[]; lead: string | null } | undefined;
  const build = () => {
    if (built) return built;
    const schema = inputJsonSchema(tool);
    const buckets = bucketFields(tool, Object.keys(schema.properties ?? {}));
    const describe = (name: string) => (buckets.includes(name) ? "Bucket, by name or id" : ((schema.properties?.[name]?.description as string | undefined) ?? undefined));
    const fields = flagsFromSchema(schema, params).map((f) => (buckets.includes(f.name) ? { ...f, description: describe(f.name) } : f));
    // Without path parameters, a tool's one required field may come first as an argument too:
    // `media search sunset`, `media buckets create photos`.
    const required = fields.filter((f) => f.required);
    const lead = params.length === 0 && required.length === 1 && required[0]!.type === "string" && !required[0]!.list ? required[0]!.name : null;
    const positionals: PositionalSpec[] = lead
      ? [{ name: lead, required: false, description: describe(lead) }]
      : params.map((name) => ({ name, required: true, description: describe(name) }));
    const extras: FlagSpec[] = [
      // Path parameters also work as flags (`--id x`), for scripts that build argument lists.
      ...params.map((name): FlagSpec => ({ name, type: "string", hidden: true })),
      // `--bucket`, as `media upload` takes it, is `--bucket-id` wherever a tool takes one.
      ...(buckets.includes("bucketId") ? [{ name: "bucket", type: "string", hidden: true } satisfies FlagSpec] : []),
      { name: "input", type: "json", placeholder: "json|@file", description: "The whole input as a JSON object (flags override its fields)" },
    ];
    const taken = new Set(fields.map((f) => f.name));
    if (isPaginated(tool) && !taken.has("all")) extras.push({ name: "all", type: "boolean", description: "Fetch every page and print them as one list" });
    if (tool.restResponse && !taken.has("output")) {
      extras.push({ name: "output", type: "string", short: "o", placeholder: "file", description: "Write a byte response to this file (- for stdout)" });
    }
    built = { positionals, fields, flags: [...fields, ...extras.filter((e) => !taken.has(e.name))], bucketFields: buckets, lead };
    return built;
  };
  return {
    path: commandPath(tool),
    section: "api",
    title: tool.title,
    description: tool.description,
    get positionals() {
      return build().positionals;
    },
    get flags() {
      return build().flags;
    },
    tool,
    run: (ctx, args) => runTool(ctx, tool, args, build(), params),
  };
}

async function runTool(
  ctx: Context,
  tool: AnyTool,
  args: ParsedArgs,
  { fields, bucketFields: buckets, lead }: { fields: FlagSpec[]; bucketFields: string[]; lead: string | null },
  params: string[],
): Promise<number> {
  const where = commandPath(tool).join(" ");
  const v = args.values;
  let input: Record<string, unknown> = {};
  if (v.input !== undefined) {
    if (typeof v.input !== "object" || v.input === null || Array.isArray(v.input)) throw new UsageError("--input must be a JSON object", where);
    input = { ...(v.input as Record<string, unknown>) };
  }
  for (const f of fields) if (v[f.name] !== undefined) input[f.name] = v[f.name];
  if (v.bucket !== undefined && input.bucketId === undefined) input.bucketId = v.bucket;
  const positional = lead ? [lead] : params;
  if (args.positionals.length > positional.length) {
    throw new UsageError(`unexpected argument '${args.positionals[positional.length]}'${positional.length ? "" : ` (${where} takes flags only)`}`, where);
  }
  if (lead && args.positionals[0] !== undefined) {
    if (v[lead] !== undefined) throw new UsageError(`give ${lead} once: as the argument or as --${kebab(lead)}`, where);
    input[lead] = args.positionals[0];
  }
  params.forEach((name, i) => {
    const given = args.positionals[i] ?? (v[name] as string | undefined);
    if (given !== undefined) input[name] = given;
  });
  for (const field of buckets) {
    if (typeof input[field] === "string") input[field] = await resolveBucketId(ctx.client(), input[field] as string);
  }
  const missingParams = params.filter((p) => input[p] === undefined);
  const missingFlags = fields.filter((f) => f.required && input[f.name] === undefined);
  if (missingParams.length || missingFlags.length) {
    const names = [...missingParams.map((p) => `<${p}>`), ...missingFlags.map((f) => `--${kebab(f.name)}`)];
    throw new UsageError(`missing ${names.join(", ")}`, where);
  }
  // Checked here with the tool's own schema, so mistakes are caught before any request.
  const checked = strictInput(tool).safeParse(input);
  if (!checked.success) throw new ApiError(0, "validation_error", "Invalid input", zodDetails(checked.error));

  const client = ctx.client();
  if (v.all === true) {
    const all = await fetchAll(client, tool, input);
    ctx.out(ctx.globals.json ? renderJson(all) : render(all, { width: ctx.columns() }));
    return EXIT.ok;
  }
  const result = await client.callRaw(tool, input);
  if (result.kind === "json") {
    ctx.out(ctx.globals.json ? renderJson(result.body) : render(result.body, { width: ctx.columns() }));
    return EXIT.ok;
  }
  if (result.kind === "redirect") {
    ctx.out(ctx.globals.json ? renderJson({ url: result.location }) : `${result.location}\n`);
    return EXIT.ok;
  }
  return writeBytes(ctx, result.response, v.output as string | undefined, where);
}

async function fetchAll(client: ReturnType<Context["client"]>, tool: AnyTool, input: Record<string, unknown>) {
  const max = (inputJsonSchema(tool).properties?.limit?.maximum as number | undefined) ?? 100;
  const data: unknown[] = [];
  let offset = (input.offset as number | undefined) ?? 0;
  let total = 0;
  for (;;) {
    const page = await client.call<{ data: unknown[]; total: number; hasMore: boolean }>(tool, { ...input, limit: max, offset });
    data.push(...page.data);
    total = page.total;
    if (!page.hasMore || page.data.length === 0) break;
    offset += page.data.length;
  }
  return { data, total, hasMore: false };
}

/** A tool that answers bytes over REST (a thumbnail): to -o, or to stdout when it is not a terminal. */
async function writeBytes(ctx: Context, response: Response, output: string | undefined, where: string): Promise<number> {
  const type = response.headers.get("content-type") ?? "application/octet-stream";
  if (output && output !== "-") {
    const n = await Bun.write(output, response);
    ctx.out(ctx.globals.json ? renderJson({ file: output, contentType: type, size: n }) : `${output}  ${type}  ${n} bytes\n`);
    return EXIT.ok;
  }
  if (ctx.stdoutIsTTY && output !== "-") {
    await response.body?.cancel();
    throw new UsageError(`the answer is ${type} bytes: write them with -o <file> (or -o - to force stdout)`, where);
  }
  await Bun.write(Bun.stdout, response);
  return EXIT.ok;
}

/** Built-in commands first: they win a name clash with an area (the tool stays reachable by its name). */
export function allCommands(tools: readonly AnyTool[] = registry): Command[] {
  const builtins = [uploadCommand, downloadCommand, ...loginCommands, mcpCommand];
  const reserved = new Set(builtins.map((c) => c.path[0]!));
  const fromTools = tools.map(toolCommand).filter((c) => !reserved.has(c.path[0]!));
  return [...builtins, ...fromTools];
}
