import { connect } from "node:net";

export interface RawResponse {
  status: number;
  headers: Headers;
  body: string;
}

/**
 * One request written by hand on its own connection, and the answer as sent. For methods the
 * runtime's fetch will not send, or mangles: Bun's fetch drops the body of an answer to TRACE
 * and sends an unknown method as GET; Node's refuses TRACE and CONNECT outright.
 */
export function rawRequest(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}, timeoutMs = 30_000): Promise<RawResponse | null> {
  const { hostname, port, host } = new URL(baseUrl);
  const head = [`${method} ${path} HTTP/1.1`, `Host: ${host}`, "Connection: close", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n");
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(head));
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer to ${method} ${path} within ${timeoutMs} ms`)));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      // The connection closed without an answer (what the runtime does with a method it does not know).
      if (text === "") return resolve(null);
      const split = text.indexOf("\r\n\r\n");
      const [statusLine, ...lines] = text.slice(0, split).split("\r\n");
      const parsed = new Headers();
      for (const line of lines) parsed.append(line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim());
      resolve({ status: Number(statusLine!.split(" ")[1]), headers: parsed, body: text.slice(split + 4) });
    });
  });
}
