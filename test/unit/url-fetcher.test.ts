import { afterAll, describe, expect, test } from "bun:test";
import { urlFetcher } from "../../worker/url-fetcher.ts";

/**
 * The import fetcher with a resolver of the test's own (no DNS here): names that resolve to
 * refused addresses, on the first hop and after a redirect.
 */
const files = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/to-internal") return new Response(null, { status: 301, headers: { location: `http://internal.example:${url.port}/secret` } });
    return new Response("ok", { headers: { "content-type": "text/plain" } });
  },
});
afterAll(() => void files.stop(true));

const NAMES: Record<string, string> = { "internal.example": "10.0.0.5", "metadata.example": "169.254.169.254", "mixed.example": "93.184.216.34", "files.example": "127.0.0.1" };
const resolve = async (host: string) => (host === "mixed.example" ? [{ address: "93.184.216.34", family: 4 }, { address: "192.168.0.2", family: 4 }] : [{ address: NAMES[host] ?? "203.0.113.9", family: 4 }]);
const options = { maxBytes: 1000, timeoutMs: 2000, maxRedirects: 3, onHeaders: async () => {}, onProgress: () => {} };

describe("url fetcher", () => {
  test("a name resolving to a private address is refused at connect time", async () => {
    const fetcher = urlFetcher({ allowPrivate: false }, resolve);
    // Refused without saying which internal address the name has.
    const refused = (host: string) => ({ code: "refused", message: `Refused: ${host} resolves to an address this service may not reach` });
    await expect(fetcher.fetch("http://internal.example/file", options)).rejects.toMatchObject(refused("internal.example"));
    await expect(fetcher.fetch("http://metadata.example/latest", options)).rejects.toMatchObject(refused("metadata.example"));
    // One refused answer among public ones refuses the name.
    await expect(fetcher.fetch("http://mixed.example/file", options)).rejects.toMatchObject(refused("mixed.example"));
  });

  test("each redirect hop is resolved and checked again", async () => {
    // Loopback is allowed here (the development setting), so the first hop connects; the
    // redirect names a host that resolves to a metadata address, which no setting allows.
    const permissive = urlFetcher({ allowPrivate: true }, async (host) => (host === "internal.example" ? [{ address: "169.254.169.254", family: 4 }] : [{ address: "127.0.0.1", family: 4 }]));
    await expect(permissive.fetch(`http://files.example:${files.port}/to-internal`, options)).rejects.toMatchObject({ code: "refused", message: "Refused: internal.example resolves to an address this service may not reach" });
    const file = await permissive.fetch(`http://files.example:${files.port}/plain`, options);
    expect(file.size).toBe(2);
    await file.discard();
  });
});
