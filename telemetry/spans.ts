/**
 * The hot path of tracing: the choke points (HTTP requests, tools, SQL, storage, job hand-over
 * and run) call `inSpan`. Until app/tracing.ts installs an implementation (an OTLP endpoint is
 * configured) it is a plain call and nothing of the OpenTelemetry SDK is loaded.
 */

export type SpanKind = "internal" | "server" | "client" | "producer" | "consumer";
export type SpanAttributes = Record<string, string | number | boolean>;

export interface SpanHandle {
  setAttribute(key: string, value: string | number | boolean): void;
}

export interface SpanImpl {
  span<T>(name: string, attributes: SpanAttributes, fn: (span: SpanHandle) => Promise<T>, kind: SpanKind, parent: string | null | undefined): Promise<T>;
  producer(name: string, attributes: SpanAttributes): string | null;
}

let impl: SpanImpl | null = null;
const NOOP: SpanHandle = { setAttribute() {} };

/** Installed while tracing is on; null turns it off again. */
export function useSpans(next: SpanImpl | null): void {
  impl = next;
}

export function tracingOn(): boolean {
  return impl !== null;
}

/**
 * Runs `fn` in a span (a child of the active one), or just runs it when tracing is off.
 * `parent`: a W3C traceparent to continue instead (an incoming request, a job's payload);
 * null or undefined: the active context.
 */
export function inSpan<T>(name: string, attributes: SpanAttributes, fn: (span: SpanHandle) => Promise<T>, opts: { kind?: SpanKind; parent?: string | null } = {}): Promise<T> {
  return impl ? impl.span(name, attributes, fn, opts.kind ?? "internal", opts.parent) : fn(NOOP);
}

/**
 * A job's hand-over as a producer span in the current trace, and the traceparent its run
 * continues from; null while tracing is off.
 */
export function jobTraceparent(jobName: string): string | null {
  return impl?.producer(`enqueue ${jobName}`, { "messaging.system": "media.outbox", "messaging.destination.name": jobName, "messaging.operation.type": "send" }) ?? null;
}
