import { describe, expect, test } from "bun:test";
import { z } from "zod";
import type { Caller } from "../../domain/access/caller.ts";
import type { Deps } from "../../domain/core/deps.ts";
import { JsonBody, withTextField } from "../../domain/core/json-body.ts";
import { defineTool, type ToolContext } from "../../tools/define.ts";
import { invokeTool } from "../../tools/invoke.ts";

/**
 * A handler may answer JSON text (a JsonBody): REST sends it as it is, every other surface gets
 * its value, and with output checks on the text must hold what the output schema describes and
 * nothing more (a field the schema does not know would otherwise reach the client).
 */
const caller: Caller = { orgId: crypto.randomUUID(), userId: crypto.randomUUID(), apiKeyId: null, scopes: new Set(["read"]), bucketId: null, principal: "user:test" };
const ctx = (validateOutputs: boolean) => ({ caller, deps: { config: { validateOutputs } } as unknown as Deps, requestId: crypto.randomUUID() }) as ToolContext;
const toolAnswering = (text: string) =>
  defineTool({
    name: "test_text",
    title: "Text",
    description: "Answers text.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/test-text" },
    input: z.object({}),
    output: z.object({ n: z.number(), names: z.array(z.string()) }),
    handler: async () => new JsonBody<{ n: number; names: string[] }>(text),
  });

describe("a handler's answer as JSON text", () => {
  test("REST gets the text as it is, other surfaces its value", async () => {
    const text = `{"n":2,"names":["a","b"]}`;
    for (const checks of [false, true]) {
      const body = await invokeTool(toolAnswering(text), {}, ctx(checks), { asBody: true });
      expect(body).toBeInstanceOf(JsonBody);
      expect((body as JsonBody<unknown>).text).toBe(text);
      expect(await invokeTool(toolAnswering(text), {}, ctx(checks))).toEqual({ n: 2, names: ["a", "b"] });
    }
  });

  test("with output checks on, text that breaks the schema or holds more than it describes is an internal error", async () => {
    for (const text of [`{"n":"2","names":[]}`, `{"n":2,"names":[],"secret":"x"}`, `{"n":2,"names":[{"x":1}]}`]) {
      const err = await invokeTool(toolAnswering(text), {}, ctx(true), { asBody: true }).then(
        () => null,
        (e: { code?: string }) => e,
      );
      expect([text, err?.code]).toEqual([text, "internal_error"]);
    }
    // Without the checks (production), the text is not parsed on the way out.
    expect(((await invokeTool(toolAnswering(`{"n":2,"names":[],"secret":"x"}`), {}, ctx(false), { asBody: true })) as JsonBody<unknown>).text).toContain("secret");
  });

  test("a field written already comes first, the others after it, with or without others", () => {
    expect(withTextField("data", `[{"a":1}]`, {}).text).toBe(`{"data":[{"a":1}]}`);
    expect(withTextField("data", `[]`, { total: 0, hasMore: false }).value()).toEqual({ data: [], total: 0, hasMore: false });
  });
});
