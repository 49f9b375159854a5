import { Interrupted } from "./context.ts";

/**
 * Asks on the terminal. Hidden answers (API keys) are read in raw mode and never echoed.
 */
export function ask(question: string, write: (s: string) => void, opts: { hidden?: boolean } = {}): Promise<string> {
  const stdin = process.stdin;
  write(question);
  return new Promise((resolve, reject) => {
    let value = "";
    const hidden = Boolean(opts.hidden && stdin.isTTY);
    if (hidden) stdin.setRawMode(true);
    stdin.setEncoding("utf8");
    const cleanup = () => {
      stdin.off("data", onData);
      if (hidden) stdin.setRawMode(false);
      stdin.pause();
    };
    const finish = () => {
      cleanup();
      if (hidden) write("\n");
      resolve(value.trim());
    };
    function onData(chunk: string) {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") return finish();
        if (ch === "\u0003" || ch === "\u0004") {
          cleanup();
          write("\n");
          return reject(new Interrupted("cancelled"));
        }
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else if (ch >= " ") value += ch;
      }
    }
    stdin.on("data", onData);
    stdin.resume();
  });
}
