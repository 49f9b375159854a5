/**
 * A file server on loopback that answers 200 at once and then sends one byte every `everyMs`,
 * for ever: the slow remote end of an import. `other` may answer some paths itself first.
 */
export function startTrickler(everyMs: number, other?: (path: string) => Response | Promise<Response> | undefined) {
  let requests = 0;
  const timers = new Set<ReturnType<typeof setInterval>>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch(request) {
      requests++;
      const own = other?.(new URL(request.url).pathname);
      if (own) return own;
      let timer: ReturnType<typeof setInterval>;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array([0x61]));
          timer = setInterval(() => {
            try {
              controller.enqueue(new Uint8Array([0x61]));
            } catch {
              clearInterval(timer);
            }
          }, everyMs);
          timers.add(timer);
        },
        cancel: () => clearInterval(timer),
      });
      return new Response(body, { headers: { "content-type": "application/octet-stream" } });
    },
  });
  return {
    url: (path = "/slow.bin") => `http://127.0.0.1:${server.port}${path}`,
    requests: () => requests,
    stop: () => {
      for (const t of timers) clearInterval(t);
      void server.stop(true);
    },
  };
}
