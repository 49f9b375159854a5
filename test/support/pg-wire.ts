import { createConnection, createServer, type Socket } from "node:net";

/**
 * A TCP proxy in front of PostgreSQL that reads what clients send: every statement a driver
 * actually sends is one Execute (extended protocol) or one Query (simple protocol) message.
 * It is the count to compare the service's own statement metrics and spans with.
 */
export interface PgWireCounter {
  port: number;
  /** Statements sent since the last reset: the SQL of each, in the order they were sent. */
  sent(): string[];
  reset(): void;
  stop(): Promise<void>;
}

const STARTUP_V3 = 196608;

/** Splits one connection's client-to-server stream into messages and notes the statements. */
function reader(onStatement: (sql: string) => void) {
  let buffer = Buffer.alloc(0);
  let startup = true;
  // The portal a Bind names is the statement an Execute runs; the unnamed ones are the usual case.
  const statements = new Map<string, string>();
  const portals = new Map<string, string>();
  const cstring = (b: Buffer, at: number): [string, number] => {
    const end = b.indexOf(0, at);
    return [b.toString("utf8", at, end), end + 1];
  };
  return (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      if (startup) {
        if (buffer.length < 8) return;
        const len = buffer.readInt32BE(0);
        if (buffer.length < len) return;
        if (buffer.readInt32BE(4) === STARTUP_V3) startup = false;
        buffer = buffer.subarray(len);
        continue;
      }
      if (buffer.length < 5) return;
      const type = String.fromCharCode(buffer[0]!);
      const len = buffer.readInt32BE(1);
      if (buffer.length < 1 + len) return;
      const body = buffer.subarray(5, 1 + len);
      buffer = buffer.subarray(1 + len);
      if (type === "Q") onStatement(cstring(body, 0)[0]);
      else if (type === "P") {
        const [name, at] = cstring(body, 0);
        statements.set(name, cstring(body, at)[0]);
      } else if (type === "B") {
        const [portal, at] = cstring(body, 0);
        portals.set(portal, statements.get(cstring(body, at)[0]) ?? "?");
      } else if (type === "E") onStatement(portals.get(cstring(body, 0)[0]) ?? "?");
    }
  };
}

export async function pgWireCounter(targetPort: number): Promise<PgWireCounter> {
  let sent: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({ host: "127.0.0.1", port: targetPort });
    sockets.add(client).add(upstream);
    const read = reader((sql) => sent.push(sql));
    client.on("data", (chunk: Buffer) => {
      read(chunk);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", close).on("error", close);
    upstream.on("close", close).on("error", close);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    sent: () => [...sent],
    reset: () => {
      sent = [];
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
