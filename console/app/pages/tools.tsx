import tools from "console:tools";
import { useEffect, useMemo, useState } from "preact/hooks";
import type { JsonSchema } from "../../../tools/json-schema.ts";
import type { ToolMeta } from "../../tool-meta.ts";
import { call, can, describeError, errorOf, mcpCall, restRequest, token, whyNot } from "../api.ts";
import { Chip, Code, Dialog, ErrorNote, Link, PageHead } from "../ui/kit.tsx";

/**
 * Every registry tool as the server describes it (title, scope, reach, annotations, schemas),
 * with a form built from its input schema that calls it with the signed-in credential, and
 * the same call written as curl, an MCP tools/call message and a `media` command.
 */
export function ToolsPage({ params }: { params: string[] }) {
  const [filter, setFilter] = useState("");
  const name = params[0] ?? tools[0]!.name;
  const tool = tools.find((t) => t.name === name);
  const shown = tools.filter((t) => !filter || `${t.name} ${t.title}`.toLowerCase().includes(filter.toLowerCase()));
  return (
    <>
      <PageHead title="Tool explorer" sub={`${tools.length} tools: the same registry behind REST, MCP, OpenAPI and the CLI.`} />
      <div class="explorer">
        <nav class="tool-list" aria-label="Tools">
          <label class="visually-hidden" for="tool-filter">
            Filter tools
          </label>
          <input id="tool-filter" type="search" placeholder="Filter tools" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
          <ul>
            {shown.map((t) => (
              <li key={t.name}>
                <Link to={`/tools/${t.name}`} aria-current={t.name === name ? "page" : undefined} class={can(t.name) ? "" : "unusable"}>
                  <span class="mono">{t.name}</span>
                  <span class="muted small-text">{t.title}</span>
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        {tool ? <ToolDetail key={tool.name} tool={tool} /> : <p>No tool named {name}.</p>}
      </div>
    </>
  );
}

function nonNull(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants) {
    const rest = variants.filter((v) => v.type !== "null");
    if (rest.length === 1) return { schema: { ...rest[0]!, description: schema.description ?? rest[0]!.description }, nullable: rest.length < variants.length };
  }
  return { schema, nullable: false };
}

type Kind = "text" | "number" | "integer" | "boolean" | "enum" | "list" | "json";

function kindOf(s: JsonSchema): Kind {
  if (Array.isArray(s.enum)) return "enum";
  if (s.type === "integer") return "integer";
  if (s.type === "number") return "number";
  if (s.type === "boolean") return "boolean";
  if (s.type === "string") return "text";
  if (s.type === "array" && s.items && ["string", "integer", "number"].includes(String(nonNull(s.items).schema.type))) return "list";
  return "json";
}

/** The form's text fields as a tool input; a field left empty is left out. */
function toInput(fields: [string, JsonSchema][], values: Record<string, string>): { input: Record<string, unknown>; problems: string[] } {
  const input: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, raw] of fields) {
    const text = values[name] ?? "";
    if (text.trim() === "") continue;
    const s = nonNull(raw).schema;
    const kind = kindOf(s);
    if (kind === "integer" || kind === "number") {
      const n = Number(text);
      if (!Number.isFinite(n)) problems.push(`${name}: not a number`);
      else input[name] = n;
    } else if (kind === "boolean") input[name] = text === "true";
    else if (kind === "list") {
      const itemType = nonNull(s.items!).schema.type;
      input[name] = text
        .split(",")
        .map((v) => v.trim())
        .filter(Boolean)
        .map((v) => (itemType === "string" ? v : Number(v)));
    } else if (kind === "json") {
      try {
        input[name] = JSON.parse(text);
      } catch {
        problems.push(`${name}: not valid JSON`);
      }
    } else input[name] = text;
  }
  return { input, problems };
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function curlOf(tool: ToolMeta, input: Record<string, unknown>): string {
  let req: ReturnType<typeof restRequest>;
  try {
    req = restRequest(tool, input);
  } catch (err) {
    return `# ${describeError(err)}`;
  }
  const parts = ["curl -s"];
  if (tool.http.method !== "GET") parts.push(`-X ${tool.http.method}`);
  parts.push(`-H "Authorization: Bearer $KEY"`);
  if (req.body !== undefined) parts.push(`-H 'content-type: application/json'`, `-d ${shellQuote(req.body)}`);
  parts.push(shellQuote(`${window.location.origin}${req.url}`));
  return parts.join(" \\\n  ");
}

function cliOf(tool: ToolMeta, input: Record<string, unknown>): string {
  const words = ["npx media", ...tool.cli.words];
  for (const p of tool.cli.params) words.push(input[p] === undefined ? `<${p}>` : shellQuote(String(input[p])));
  for (const f of tool.cli.flags) {
    const v = input[f.name];
    if (v === undefined) continue;
    if (f.type === "boolean") words.push(v ? f.flag : `--no-${f.flag.slice(2)}`);
    else if (f.list && Array.isArray(v)) words.push(`${f.flag} ${shellQuote(v.join(","))}`);
    else if (f.type === "json" || typeof v === "object") words.push(`${f.flag} ${shellQuote(JSON.stringify(v))}`);
    else words.push(`${f.flag} ${/^[\w.:/@-]+$/.test(String(v)) ? String(v) : shellQuote(String(v))}`);
  }
  return `# MEDIA_URL=${window.location.origin} MEDIA_API_KEY=<secret> (or npx media login)\n${words.join(" ")}`;
}

function ToolDetail({ tool }: { tool: ToolMeta }) {
  const fields = useMemo(() => Object.entries(tool.input.properties ?? {}) as [string, JsonSchema][], [tool]);
  const required = new Set(tool.input.required ?? []);
  const [values, setValues] = useState<Record<string, string>>({});
  const [json, setJson] = useState<string | null>(null);
  const [result, setResult] = useState<{ ok: boolean; body: unknown; ms: number } | null>(null);
  const [busy, setBusy] = useState(false);
  const formInput = toInput(fields, values);
  let input = formInput.input;
  let problems = formInput.problems;
  if (json !== null) {
    try {
      input = JSON.parse(json);
      problems = [];
    } catch {
      problems = ["The JSON input is not valid JSON"];
    }
  }
  useEffect(() => {
    document.title = `${tool.name} · Tool explorer · Media console`;
  }, [tool.name]);
  const allowed = can(tool.name);
  const refused = whyNot(tool.name);
  const [confirming, setConfirming] = useState(false);
  const a = tool.annotations;
  // A destructive tool (its destructiveHint) asks first, as the console's own delete buttons do.
  const submit = (e: Event) => {
    e.preventDefault();
    if (a.destructiveHint) setConfirming(true);
    else void run();
  };
  const run = async () => {
    setConfirming(false);
    setBusy(true);
    const started = performance.now();
    try {
      const body = tool.http.produces ? await describeBytes(tool, input) : await call(tool.name, input);
      setResult({ ok: true, body, ms: performance.now() - started });
    } catch (err) {
      setResult({ ok: false, body: describeError(err), ms: performance.now() - started });
    } finally {
      setBusy(false);
    }
  };
  return (
    <article class="tool-detail" aria-labelledby="tool-title">
      <header>
        <h2 id="tool-title">{tool.title}</h2>
        <p class="mono">
          <span class={`method method-${tool.http.method.toLowerCase()}`}>{tool.http.method}</span> /api{tool.http.path} · {tool.name}
        </p>
        <div class="chips">
          <Chip tone="info">scope: {tool.scope}</Chip>
          <Chip>reach: {tool.reach}</Chip>
          {a.readOnlyHint && <Chip>read-only</Chip>}
          {a.destructiveHint && <Chip tone="warn">destructive</Chip>}
          {a.idempotentHint && <Chip>idempotent</Chip>}
          {tool.errors.map((e) => (
            <Chip key={e} tone="muted">
              {e}
            </Chip>
          ))}
        </div>
        <p>{tool.description}</p>
        {!allowed && <p class="warn-note">This credential cannot use this tool: it {refused}.</p>}
      </header>
      <form class="card tool-form" onSubmit={submit} aria-label={`Call ${tool.name}`}>
        <div class="section-head">
          <h3>Input</h3>
          <button type="button" class="small" onClick={() => setJson(json === null ? JSON.stringify(input, null, 2) : null)}>
            {json === null ? "Edit as JSON" : "Edit as form"}
          </button>
        </div>
        {json !== null ? (
          <label class="field">
            <span class="field-label">Input (JSON)</span>
            <textarea rows={8} class="mono" value={json} onInput={(e) => setJson((e.target as HTMLTextAreaElement).value)} />
          </label>
        ) : fields.length === 0 ? (
          <p class="muted">This tool takes no input.</p>
        ) : (
          fields.map(([name, raw]) => <SchemaField key={name} name={name} schema={raw} required={required.has(name)} value={values[name] ?? ""} onChange={(v) => setValues({ ...values, [name]: v })} />)
        )}
        {problems.map((p) => (
          <p key={p} class="error-note">
            {p}
          </p>
        ))}
        <div class="actions left">
          <button type="submit" class={a.destructiveHint ? "danger" : "primary"} disabled={busy || !allowed || problems.length > 0}>
            Call {tool.name}
          </button>
        </div>
        <Dialog title={`Call ${tool.name}?`} open={confirming} onClose={() => setConfirming(false)}>
          <p>
            {tool.title} is destructive: what it removes or changes cannot be undone from here. It runs with the signed-in credential, on
            the input below.
          </p>
          <pre tabIndex={0} aria-label="Input to send">
            <code>{JSON.stringify(input, null, 2)}</code>
          </pre>
          <div class="actions">
            <button type="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
            <button type="button" class="danger" onClick={() => void run()}>
              Call {tool.name}
            </button>
          </div>
        </Dialog>
        {result && (
          <div class={`result ${result.ok ? "ok" : "failed"}`} role="status">
            <p>
              {result.ok ? "Answered" : "Failed"} in {Math.round(result.ms)} ms
            </p>
            <pre tabIndex={0} aria-label="Result">
              <code>{typeof result.body === "string" ? result.body : JSON.stringify(result.body, null, 2)}</code>
            </pre>
          </div>
        )}
      </form>
      <section class="equivalents" aria-label="The same call elsewhere">
        <Code label="curl" text={curlOf(tool, input)} />
        <Code label="MCP tools/call" text={JSON.stringify(mcpCall(tool.name, input), null, 2)} />
        <Code label="CLI" text={cliOf(tool, input)} />
      </section>
      <details>
        <summary>Input schema</summary>
        <pre tabIndex={0}>
          <code>{JSON.stringify(tool.input, null, 2)}</code>
        </pre>
      </details>
      <details>
        <summary>Output schema</summary>
        <pre tabIndex={0}>
          <code>{JSON.stringify(tool.output, null, 2)}</code>
        </pre>
      </details>
    </article>
  );
}

/** A tool whose REST answer is bytes (a thumbnail): fetch them and describe what came back. */
async function describeBytes(tool: ToolMeta, input: Record<string, unknown>) {
  const req = restRequest(tool, input);
  const response = await fetch(req.url, { headers: { authorization: `Bearer ${token.value}` } });
  if (!response.ok) {
    throw await errorOf(response);
  }
  const blob = await response.blob();
  return { status: response.status, contentType: response.headers.get("content-type"), bytes: blob.size, etag: response.headers.get("etag") };
}

function SchemaField(props: { name: string; schema: JsonSchema; required: boolean; value: string; onChange: (v: string) => void }) {
  const { schema: s } = nonNull(props.schema);
  const kind = kindOf(s);
  const id = `field-${props.name}`;
  const description = typeof s.description === "string" ? s.description : "";
  const label = (
    <span class="field-label">
      {props.name}
      {props.required && s.default === undefined ? <span aria-hidden="true"> *</span> : ""} <span class="muted small-text">{kind === "list" ? `list of ${nonNull(s.items!).schema.type}` : kind === "enum" ? "one of" : String(s.type ?? "json")}</span>
    </span>
  );
  const onInput = (e: Event) => props.onChange((e.target as HTMLInputElement).value);
  const common = { id, value: props.value, required: props.required && s.default === undefined, "aria-describedby": description ? `${id}-hint` : undefined };
  let control;
  if (kind === "enum") {
    control = (
      <select {...common} onChange={onInput}>
        <option value="">{s.default !== undefined ? `(default: ${String(s.default)})` : "(unset)"}</option>
        {(s.enum as unknown[]).map((v) => (
          <option key={String(v)} value={String(v)}>
            {String(v)}
          </option>
        ))}
      </select>
    );
  } else if (kind === "boolean") {
    control = (
      <select {...common} onChange={onInput}>
        <option value="">(unset)</option>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  } else if (kind === "json") {
    control = <textarea {...common} rows={3} class="mono" onInput={onInput} placeholder="JSON" />;
  } else {
    const placeholder = s.default !== undefined ? `default ${JSON.stringify(s.default)}` : kind === "list" ? "comma-separated" : s.format === "uuid" ? "uuid" : "";
    control =
      kind === "integer" || kind === "number" ? (
        <input {...common} type="number" step={kind === "integer" ? 1 : "any"} placeholder={placeholder} onInput={onInput} />
      ) : (
        <input {...common} type="text" placeholder={placeholder} onInput={onInput} />
      );
  }
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {control}
      {description && (
        <span class="hint" id={`${id}-hint`}>
          {description}
        </span>
      )}
    </div>
  );
}
