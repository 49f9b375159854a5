/**
 * Reading a tools/call result as an agent's client does: a summary line first, then the whole
 * answer as JSON (docs/mcp.md#tool-results), then any image.
 */
type Block = { type: string; text?: string };

/** The text blocks of a result's content, in order. */
export function textBlocks(content: unknown): string[] {
  return ((content ?? []) as Block[]).filter((b) => b.type === "text").map((b) => b.text ?? "");
}

/** The JSON block: the answer (or, for an isError result, the REST error envelope). */
// biome-ignore lint: what a test reads from it is its own business
export function resultJson(content: unknown): any {
  const json = textBlocks(content).find((t) => t.startsWith("{"));
  if (json === undefined) throw new Error(`no JSON text block in ${JSON.stringify(content)}`);
  return JSON.parse(json);
}

/** An isError result's error: the catalogue's code, message and details. */
export function toolError(content: unknown): { code: string; message: string; details?: unknown; requestId?: string } {
  return resultJson(content).error;
}
