import type { TracingSettings } from "../domain/core/config.ts";
import { errorText } from "../telemetry/error-text.ts";
import type { Logger } from "../domain/ports/log.ts";
import { type SpanKind, tracingOn, useSpans } from "../telemetry/spans.ts";

export { inSpan, jobTraceparent, type SpanAttributes, tracingOn } from "../telemetry/spans.ts";

/**
 * OpenTelemetry traces, off unless an OTLP endpoint is configured (the standard
 * OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). The choke points call
 * telemetry/spans.ts; this file loads the SDK (only then) and installs it there.
 */

/** The standard variables, read from the service's environment; null when tracing stays off. */
export function tracingSettings(env: Record<string, string | undefined>, defaultService: string): TracingSettings | null {
  const get = (k: string) => (env[k] === undefined || env[k] === "" ? undefined : env[k]);
  if (get("OTEL_SDK_DISABLED")?.toLowerCase() === "true") return null;
  if (get("OTEL_TRACES_EXPORTER") && get("OTEL_TRACES_EXPORTER") !== "otlp") return null;
  const base = get("OTEL_EXPORTER_OTLP_ENDPOINT");
  const url = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") ?? (base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined);
  if (!url) return null;
  const protocol = get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? get("OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    throw new Error(`Invalid configuration:\n  OTEL_EXPORTER_OTLP_PROTOCOL: ${protocol} is not supported here; use http/protobuf or http/json`);
  }
  const headers: Record<string, string> = {};
  for (const source of [get("OTEL_EXPORTER_OTLP_HEADERS"), get("OTEL_EXPORTER_OTLP_TRACES_HEADERS")]) {
    for (const pair of source?.split(",") ?? []) {
      const at = pair.indexOf("=");
      if (at > 0) headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    }
  }
  const sampler = get("OTEL_TRACES_SAMPLER") ?? "parentbased_always_on";
  const arg = Number(get("OTEL_TRACES_SAMPLER_ARG") ?? "1");
  const sampleRatio = sampler.endsWith("always_off") ? 0 : sampler.endsWith("traceidratio") && Number.isFinite(arg) ? Math.min(Math.max(arg, 0), 1) : 1;
  return { url, protocol, headers, serviceName: get("OTEL_SERVICE_NAME") ?? defaultService, sampleRatio };
}

/**
 * Loads the SDK and makes it the process's tracer. Tracing is process-wide (one exporter per
 * process): a second call while it is on changes nothing. `stop` flushes what is pending.
 */
export async function startTracing(settings: TracingSettings, log: Logger, version: string): Promise<{ stop(): Promise<void> }> {
  if (tracingOn()) return { stop: async () => {} };
  const api = await import("@opentelemetry/api");
  const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
  const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } = await import("@opentelemetry/sdk-trace-base");
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  const { W3CTraceContextPropagator } = await import("@opentelemetry/core");
  const { OTLPTraceExporter } =
    settings.protocol === "http/json" ? await import("@opentelemetry/exporter-trace-otlp-http") : await import("@opentelemetry/exporter-trace-otlp-proto");

  const exporter = new OTLPTraceExporter({ url: settings.url, headers: settings.headers });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": settings.serviceName, "service.version": version }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(contextManager);
  api.trace.setGlobalTracerProvider(provider);
  const propagator = new W3CTraceContextPropagator();
  api.propagation.setGlobalPropagator(propagator);
  const tracer = api.trace.getTracer("media-storage", version);
  const kinds: Record<SpanKind, number> = {
    internal: api.SpanKind.INTERNAL,
    server: api.SpanKind.SERVER,
    client: api.SpanKind.CLIENT,
    producer: api.SpanKind.PRODUCER,
    consumer: api.SpanKind.CONSUMER,
  };
  const contextOf = (traceparent: string | null | undefined) =>
    traceparent ? propagator.extract(api.ROOT_CONTEXT, { traceparent }, api.defaultTextMapGetter) : api.context.active();
  const traceparentOf = (ctx: ReturnType<typeof api.context.active>) => {
    const carrier: Record<string, string> = {};
    propagator.inject(ctx, carrier, api.defaultTextMapSetter);
    return carrier.traceparent ?? null;
  };

  useSpans({
    span: (name, attributes, fn, kind, parent) =>
      tracer.startActiveSpan(name, { kind: kinds[kind], attributes }, contextOf(parent), async (span) => {
        try {
          return await fn(span);
        } catch (err) {
          // A failed statement's error carries its parameters: the span gets the text a log line would.
          span.recordException(err instanceof Error ? { name: err.name, message: errorText(err), stack: errorText(err, { stack: true }) } : errorText(err));
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: err instanceof Error ? err.name : undefined });
          throw err;
        } finally {
          span.end();
        }
      }),
    producer: (name, attributes) => {
      const span = tracer.startSpan(name, { kind: api.SpanKind.PRODUCER, attributes });
      span.end();
      return traceparentOf(api.trace.setSpan(api.context.active(), span));
    },
  });
  log.info("tracing on", { endpoint: withoutCredentials(settings.url), protocol: settings.protocol, service: settings.serviceName });
  return {
    stop: async () => {
      useSpans(null);
      await provider.shutdown().catch((err: unknown) => log.warn("flushing traces failed", { error: String(err) }));
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
}

/** For logs: an endpoint URL without any user:password it may carry. */
export function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    return u.toString();
  } catch {
    return "(invalid url)";
  }
}
