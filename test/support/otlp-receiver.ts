/**
 * An OTLP/HTTP trace receiver for tests: a real HTTP server that accepts what the exporters
 * send to /v1/traces, in either encoding (protobuf, JSON), and decodes it into spans.
 * The protobuf side is a small wire-format reader over the few fields of
 * ExportTraceServiceRequest a test looks at.
 */

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** 2 when the span recorded an error. */
  statusCode: number;
  /** Its events (a recorded exception is one named "exception"). */
  events: { name: string; attributes: Record<string, string | number | boolean> }[];
}

type Field = { no: number; wire: number; value: bigint | Uint8Array };

function readFields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const no = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) {
      out.push({ no, wire, value: buf.subarray(i, i + 8) });
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, wire, value: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 5) {
      out.push({ no, wire, value: buf.subarray(i, i + 4) });
      i += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const bytes = (f: Field[], no: number) => f.filter((x) => x.no === no).map((x) => x.value as Uint8Array);
const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString("hex") : "");
const text = (b: Uint8Array | undefined) => (b ? new TextDecoder().decode(b) : "");

function anyValue(buf: Uint8Array): string | number | boolean {
  const [f] = readFields(buf);
  if (!f) return "";
  if (f.no === 1) return text(f.value as Uint8Array);
  if (f.no === 2) return f.value !== 0n;
  if (f.no === 3) return Number(BigInt.asIntN(64, f.value as bigint));
  if (f.no === 4) return Buffer.from(f.value as Uint8Array).readDoubleLE(0);
  return "";
}

function keyValues(list: Uint8Array[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list) {
    const f = readFields(kv);
    out[text(bytes(f, 1)[0])] = anyValue(bytes(f, 2)[0] ?? new Uint8Array());
  }
  return out;
}

function fromProtobuf(body: Uint8Array): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of bytes(readFields(body), 1)) {
    const rsf = readFields(rs);
    const resource = bytes(rsf, 1)[0];
    const service = String(keyValues(resource ? bytes(readFields(resource), 1) : [])["service.name"] ?? "");
    for (const ss of bytes(rsf, 2)) {
      for (const s of bytes(readFields(ss), 2)) {
        const f = readFields(s);
        const status = bytes(f, 15)[0];
        const code = status ? readFields(status).find((x) => x.no === 3)?.value : undefined;
        spans.push({
          service,
          traceId: hex(bytes(f, 1)[0]),
          spanId: hex(bytes(f, 2)[0]),
          parentSpanId: hex(bytes(f, 4)[0]),
          name: text(bytes(f, 5)[0]),
          kind: Number(f.find((x) => x.no === 6)?.value ?? 0n),
          attributes: keyValues(bytes(f, 9)),
          statusCode: Number(code ?? 0n),
          events: bytes(f, 11).map((e) => {
            const ef = readFields(e);
            return { name: text(bytes(ef, 2)[0]), attributes: keyValues(bytes(ef, 3)) };
          }),
        });
      }
    }
  }
  return spans;
}

interface JsonKeyValue {
  key: string;
  value: { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number };
}

function jsonAttributes(list: JsonKeyValue[] = []): Record<string, string | number | boolean> {
  return Object.fromEntries(list.map((kv) => [kv.key, kv.value.stringValue ?? kv.value.boolValue ?? (kv.value.intValue !== undefined ? Number(kv.value.intValue) : (kv.value.doubleValue ?? ""))]));
}

function fromJson(body: any): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const service = String(jsonAttributes(rs.resource?.attributes)["service.name"] ?? "");
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          service,
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? "",
          name: s.name,
          kind: s.kind,
          attributes: jsonAttributes(s.attributes),
          statusCode: s.status?.code ?? 0,
          events: (s.events ?? []).map((e: { name: string; attributes?: JsonKeyValue[] }) => ({ name: e.name, attributes: jsonAttributes(e.attributes) })),
        });
      }
    }
  }
  return spans;
}

export interface OtlpReceiver {
  /** The base to set as OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the exports received. */
  encodings: Set<string>;
  stop(): void;
}

export function otlpReceiver(): OtlpReceiver {
  const spans: ReceivedSpan[] = [];
  const encodings = new Set<string>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      if (request.method !== "POST" || new URL(request.url).pathname !== "/v1/traces") return new Response("not found", { status: 404 });
      const type = request.headers.get("content-type") ?? "";
      encodings.add(type);
      if (type.includes("json")) spans.push(...fromJson(await request.json()));
      else spans.push(...fromProtobuf(new Uint8Array(await request.arrayBuffer())));
      return new Response(type.includes("json") ? "{}" : new Uint8Array(), { headers: { "content-type": type } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, spans, encodings, stop: () => server.stop(true) };
}
