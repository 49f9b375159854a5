import type { SqlInstrument } from "../db/instrument.ts";
import { onBehalfOf } from "../db/pglite-lanes.ts";
import type { Meters } from "../domain/ports/meters.ts";
import type { Processors } from "../domain/ports/queue.ts";
import type { SearchBackend } from "../domain/ports/search.ts";
import type { RequestObserver } from "../http/pipeline.ts";
import type { StorageInstrument } from "../storage/s3.ts";
import { type ToolCallNote, toolCallNotes } from "../tools/invoke.ts";
import { orgOf } from "../worker/fair-share.ts";
import { type Metrics, type Surface, sqlOperation } from "./metrics.ts";
import { inSpan, type SpanAttributes } from "./tracing.ts";

/**
 * The choke points' instruments: each records its metrics and, while tracing is on, its span.
 * app/services.ts hands them to the adapters it opens.
 */

/** The CLI's stdio bridge relays to /mcp with its own User-Agent: that is how its traffic is told apart. */
function surfaceOf(request: Request, kind: "tool" | "mcp" | "public"): Surface {
  if (kind !== "mcp") return "rest";
  return request.headers.get("user-agent")?.startsWith("media-cli/") ? "cli" : "mcp";
}

export function requestObserver(metrics: Metrics): RequestObserver {
  return async (ctx, route, handle) => {
    const surface = surfaceOf(ctx.request, route.kind);
    const note: ToolCallNote = { tool: route.tool, failedWith: null };
    const started = performance.now();
    metrics.inFlight.inc();
    let status = 500;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      metrics.inFlight.dec();
      const tool = note.tool ?? "none";
      metrics.requests.inc({ surface, tool, status: String(status) });
      metrics.requestDuration.observe({ surface, tool }, (performance.now() - started) / 1000);
    };
    let streaming: Response | null = null;
    try {
      const attributes = { "http.request.method": ctx.request.method, "http.route": route.template.slice(route.template.indexOf(" ") + 1), "media.surface": surface, "media.request_id": ctx.requestId };
      return await inSpan(
        route.template,
        attributes,
        async (span) => {
          const response = await toolCallNotes.run(note, handle);
          status = note.failedWith ?? response.status;
          span.setAttribute("http.response.status_code", response.status);
          if (note.tool) span.setAttribute("media.tool", note.tool);
          if (response.status === 429) metrics.rateLimited.inc({ surface });
          if (response.headers.get("idempotency-replayed") === "true") metrics.idempotentReplays.inc({ surface });
          // A tool call answered as an event stream (MCP, with its notifications) runs on after
          // the headers: it is counted when the stream ends, with the status its tool ended in.
          // The type first: reading `body` of an answer made from a string turns it into a stream
          // (encoding the text then), which cost a listing a twentieth of its CPU.
          if (response.headers.get("content-type")?.includes("text/event-stream") && response.body) {
            streaming = new Response(
              response.body.pipeThrough(
                new TransformStream<Uint8Array, Uint8Array>({
                  flush: () => {
                    status = note.failedWith ?? response.status;
                    settle();
                  },
                  cancel: () => settle(),
                } as Transformer<Uint8Array, Uint8Array>),
              ),
              { status: response.status, statusText: response.statusText, headers: response.headers },
            );
            return streaming;
          }
          return response;
        },
        { kind: "server", parent: ctx.request.headers.get("traceparent") },
      );
    } finally {
      if (!streaming) settle();
    }
  };
}

/** Statement text in spans is the SQL with its placeholders ($1...), never the values. */
const MAX_STATEMENT_CHARS = 2000;

export function sqlInstrument(metrics: Metrics, system: "postgresql"): SqlInstrument {
  return (kind, statement, run) => {
    const operation = kind === "transaction" ? "transaction" : sqlOperation(statement);
    const attributes: SpanAttributes = kind === "transaction" ? { "db.system.name": system } : { "db.system.name": system, "db.operation.name": operation, "db.query.text": statement.slice(0, MAX_STATEMENT_CHARS) };
    return inSpan(kind === "transaction" ? "db transaction" : `db ${operation}`, attributes, () => metrics.time(metrics.dbDuration, metrics.dbErrors, { operation }, run), { kind: "client" });
  };
}

export function storageInstrument(metrics: Metrics): StorageInstrument {
  return (operation, run) =>
    inSpan(`storage ${operation}`, { "media.storage.operation": operation }, () => metrics.time(metrics.storageDuration, metrics.storageErrors, { operation }, run), { kind: "client" });
}

/** Every search goes through `search`, whichever backend answers it. */
export function observeSearch(backend: SearchBackend, metrics: Metrics): SearchBackend {
  const search = backend.search.bind(backend);
  const labels = { backend: backend.name };
  Object.assign(backend, {
    search: (req: Parameters<SearchBackend["search"]>[0]) =>
      inSpan(`search ${backend.name}`, { "media.search.backend": backend.name }, () => metrics.time(metrics.searchDuration, metrics.searchErrors, labels, () => search(req))),
  });
  return backend;
}

/**
 * Every job run, on either queue, in any process: its duration and outcome, in a span that
 * continues the trace of the request that enqueued it (the traceparent in its payload).
 */
export function observeProcessors(processors: Processors, metrics: Metrics): Processors {
  const out: Processors = {};
  for (const [kind, handler] of Object.entries(processors) as [keyof Processors, NonNullable<Processors[keyof Processors]>][]) {
    out[kind] = {
      ...handler,
      run: (job, run) => {
        const parent = (job.data as { traceparent?: unknown }).traceparent;
        // The embedded database takes organizations' statements in turns (db/pglite-lanes.ts).
        return onBehalfOf.run(orgOf(job.data), () => inSpan(
          `job ${kind}`,
          { "messaging.system": "media.outbox", "messaging.destination.name": kind, "messaging.operation.type": "process", "media.job.attempt": run.attempt },
          async () => {
            const end = metrics.jobDuration.startTimer({ kind });
            try {
              await handler.run(job, run);
              metrics.jobRuns.inc({ kind, outcome: "completed" });
            } catch (err) {
              metrics.jobRuns.inc({ kind, outcome: "failed" });
              throw err;
            } finally {
              end();
            }
          },
          { kind: "consumer", parent: typeof parent === "string" ? parent : null },
        ));
      },
    };
  }
  return out;
}

export function meters(metrics: Metrics): Meters {
  return {
    uploaded: (bytes) => metrics.uploadedBytes.inc(bytes),
    egressIssued: (kind, bytes) => metrics.egressBytes.inc({ kind }, bytes),
  };
}
