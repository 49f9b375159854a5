/**
 * A listener that could not start, said in the operator's terms. Bun and node:http report a
 * busy port as a stack trace ending in `EADDRINUSE`, which does not say which of the service's
 * ports it was (PORT, STORAGE_PORT, METRICS_PORT) nor what to change; this names the port and
 * the variable that moves it.
 */
export class ListenError extends Error {
  override name = "ListenError";
  constructor(
    message: string,
    readonly variable: string,
    readonly port: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface Listener {
  /** The environment variable that chooses the port. */
  variable: string;
  /** What listens there, for the message ("the API", "the embedded storage node"). */
  what: string;
  host: string;
  port: number;
  /** The variable that chooses the address, when there is one (HOST). */
  hostVariable?: string;
}

const codeOf = (err: unknown): string | undefined => (err && typeof err === "object" && "code" in err ? String((err as { code: unknown }).code) : undefined);

/** `err` as a ListenError when it is a refusal to listen that the operator can fix; otherwise `err` unchanged. */
export function explainListenError(err: unknown, l: Listener): unknown {
  const at = `${l.host.includes(":") ? `[${l.host}]` : l.host}:${l.port}`;
  switch (codeOf(err)) {
    case "EADDRINUSE":
      return new ListenError(
        `Cannot start: port ${l.port} (${l.variable}, ${l.what}) is already in use on ${l.host}. Stop what listens on ${at}, or set ${l.variable} to a free port.`,
        l.variable,
        l.port,
        { cause: err },
      );
    case "EACCES":
      return new ListenError(
        `Cannot start: this process may not listen on ${at} (${l.variable}, ${l.what}); ports below 1024 need privileges. Set ${l.variable} to a port above 1023.`,
        l.variable,
        l.port,
        { cause: err },
      );
    case "EADDRNOTAVAIL":
      return new ListenError(
        `Cannot start: ${l.host} is not an address of this machine (${l.hostVariable ?? "host"}, ${l.what}).${l.hostVariable ? ` Set ${l.hostVariable} to one of its addresses, or 0.0.0.0.` : ""}`,
        l.hostVariable ?? l.variable,
        l.port,
        { cause: err },
      );
    default:
      return err;
  }
}

/** Runs `start`, turning a refusal to listen into a ListenError that names `l.variable`. */
export async function listening<T>(l: Listener, start: () => T | Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    throw explainListenError(err, l);
  }
}

/** Ends a start that could not listen with one line on stderr and status 1; any other error is rethrown with its stack. */
export function exitIfListenError(err: unknown, more = ""): void {
  if (!(err instanceof ListenError)) return;
  process.stderr.write(`${err.message}${more ? ` ${more}` : ""}\n`);
  process.exit(1);
}
