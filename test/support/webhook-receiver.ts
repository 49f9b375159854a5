import { Webhook } from "standardwebhooks";

/**
 * A webhook receiver as an integrator would run one: a real HTTP server on loopback that
 * verifies each delivery with the `standardwebhooks` package and records what it got.
 * `respond` decides each answer (status, or a delay past the sender's deadline).
 */

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  payload: { type: string; timestamp: string; data: Record<string, any> };
  /** null when the signature verified with the secret given (`secret`), else why not. */
  verifyError: string | null;
  at: number;
}

export type Answer = number | { status?: number; delayMs?: number; hang?: boolean };

export interface Receiver {
  url: string;
  received: Received[];
  /** The signing secret to verify with (set after creating the endpoint). */
  secret: string | null;
  respond: (r: Received, n: number) => Answer;
  ofType(type: string): Received[];
  /** Releases requests held by `hang`. */
  release(): void;
  stop(): void;
}

export function startReceiver(path = "/hooks"): Receiver {
  let held: (() => void)[] = [];
  const self: Receiver = {
    url: "",
    received: [],
    secret: null,
    respond: () => 204,
    ofType: (type) => self.received.filter((r) => r.payload.type === type),
    release: () => {
      for (const h of held) h();
      held = [];
    },
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = await req.text();
      const headers = Object.fromEntries(req.headers);
      let verifyError: string | null = "no secret to verify with";
      if (self.secret) {
        try {
          new Webhook(self.secret).verify(body, headers);
          verifyError = null;
        } catch (err) {
          verifyError = String(err);
        }
      }
      const r: Received = {
        id: headers["webhook-id"] ?? "",
        timestamp: headers["webhook-timestamp"] ?? "",
        signature: headers["webhook-signature"] ?? "",
        body,
        payload: JSON.parse(body),
        verifyError,
        at: Date.now(),
      };
      self.received.push(r);
      const answer = self.respond(r, self.received.length);
      const a = typeof answer === "number" ? { status: answer } : answer;
      if (a.hang) await new Promise<void>((resolve) => held.push(resolve));
      if (a.delayMs) await Bun.sleep(a.delayMs);
      return new Response(null, { status: a.status ?? 204 });
    },
  });
  self.url = `http://127.0.0.1:${server.port}${path}`;
  return self;
}
