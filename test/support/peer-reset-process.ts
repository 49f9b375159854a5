import { EventEmitter } from "node:events";
import { createServer, connect } from "node:net";
import { keepRunningThroughPeerResets } from "../../app/socket-resets.ts";

/**
 * A child process for test/unit/peer-resets.test.ts: installs the process handlers, then leaves
 * one error unhandled in the way MODE names and says "alive" if it is still running after.
 * The reset is a real one: a server resets the connection and the socket reports it.
 */
keepRunningThroughPeerResets({ warn: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: "warn", msg, ...fields })}\n`) });

function realReset(): Promise<Error> {
  return new Promise((resolve) => {
    const server = createServer((c) => c.resetAndDestroy());
    server.listen(0, "127.0.0.1", () => {
      const socket = connect((server.address() as { port: number }).port, "127.0.0.1");
      socket.on("error", (err) => {
        server.close();
        resolve(err);
      });
      socket.on("data", () => {});
    });
  });
}

const mode = process.env.MODE;
const reset = await realReset();
if (mode === "reset-event") setImmediate(() => new EventEmitter().emit("error", reset));
else if (mode === "reset-rejection") void Promise.reject(reset);
else if (mode === "other-exception") setImmediate(() => {
  throw new Error("a genuine bug");
});
else if (mode === "other-rejection") void Promise.reject(new Error("a genuine bug"));
setTimeout(() => {
  process.stdout.write("alive\n");
  process.exit(0);
}, 300);
