/**
 * An answer already written as JSON text, standing for the value it parses to.
 *
 * A listing's page is up to 200 media views that PostgreSQL writes as JSON. Parsing that text
 * into objects only for the REST answer to write them back was a third of a listing's CPU in
 * our process (bench/notes/2026-11-30-views-as-text.md); REST sends the text as it is, and the
 * other surfaces (MCP, in-process calls) take `value()`. The text must parse to exactly what
 * the tool's output schema describes: with output checks on (the tests), invokeTool holds it
 * to that.
 */
export class JsonBody<T> {
  constructor(readonly text: string) {}

  value(): T {
    return JSON.parse(this.text) as T;
  }
}

/** An object's JSON text whose field `name` comes first, written already (`text`), and then `rest`'s fields. */
export function withTextField<T>(name: string, text: string, rest: object): JsonBody<T> {
  const others = JSON.stringify(rest);
  return new JsonBody(`{${JSON.stringify(name)}:${text}${others === "{}" ? "}" : `,${others.slice(1)}`}`);
}

/** The value of a handler's answer, whichever form it came in. */
export function valueOf<T>(output: T | JsonBody<T>): T {
  return output instanceof JsonBody ? output.value() : output;
}
