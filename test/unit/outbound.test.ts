import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addressRefusal } from "../../net/address-policy.ts";
import { checkOutboundUrl, type OutboundPolicy, OutboundRefused, OutboundTimeout, sendOutbound } from "../../net/outbound.ts";

/**
 * The SSRF-safe outbound request (net/): what it refuses without the network, what it refuses
 * once a name resolves, and that a name is connected to at the address that was checked.
 * Names are resolved by a table here, so no test asks a real DNS server.
 */

const strict: OutboundPolicy = { allowPrivate: false, allowedHosts: null };
const dev: OutboundPolicy = { allowPrivate: true, allowedHosts: null };
let server: ReturnType<typeof Bun.serve>;
let seen: { host: string | null; path: string }[] = [];

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      seen.push({ host: req.headers.get("host"), path: url.pathname });
      if (url.pathname === "/slow") await Bun.sleep(2000);
      if (url.pathname === "/redirect") return new Response(null, { status: 302, headers: { location: "http://127.0.0.1:1/elsewhere" } });
      if (url.pathname === "/big") return new Response("x".repeat(100_000));
      return new Response(`got ${await req.text()}`, { status: url.pathname === "/fail" ? 500 : 200 });
    },
  });
});
afterAll(() => server.stop(true));

const table = (entries: Record<string, string[]>) => async (host: string) =>
  (entries[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

describe("address policy", () => {
  test("public unicast addresses pass", () => {
    for (const a of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "[2001:4860:4860::8888]"]) expect({ a, why: addressRefusal(a, strict) }).toEqual({ a, why: null });
  });

  test("loopback, private, link-local, unique-local, shared and special addresses are refused", () => {
    const refused = [
      "127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.1.1", "100.64.0.1",
      "0.0.0.0", "255.255.255.255", "224.0.0.1", "240.0.0.1", "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1",
      "::ffff:127.0.0.1", "::ffff:10.0.0.1", "[::1]",
    ];
    for (const a of refused) expect({ a, refused: addressRefusal(a, strict) !== null }).toEqual({ a, refused: true });
  });

  test("IPv4-compatible addresses (::/96) are refused, even where private addresses are allowed", () => {
    for (const a of ["::7f00:1", "[::7f00:1]", "::a9fe:a9fe", "::808:808", "::127.0.0.1", "::2"]) {
      expect({ a, strict: addressRefusal(a, strict), dev: addressRefusal(a, dev) }).toEqual({ a, strict: expect.stringContaining("IPv4-compatible"), dev: expect.stringContaining("IPv4-compatible") });
    }
  });

  test("an IPv4-mapped address is judged as the IPv4 address it maps", () => {
    expect(addressRefusal("::ffff:127.0.0.1", strict)).toContain("127.0.0.1 is a loopback address");
    expect(addressRefusal("::ffff:8.8.8.8", strict)).toBeNull();
  });

  test("allowing private addresses (development) still refuses cloud metadata and the unspecified address", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "fd00::1", "fe80::1", "::1"]) expect({ a, why: addressRefusal(a, dev) }).toEqual({ a, why: null });
    for (const a of ["169.254.169.254", "fd00:ec2::254", "100.100.100.200", "::ffff:169.254.169.254"]) {
      expect(addressRefusal(a, dev)).toContain("cloud metadata");
    }
    expect(addressRefusal("0.0.0.0", dev)).not.toBeNull();
  });
});

describe("checkOutboundUrl", () => {
  test("refuses other schemes, credentials, private literals and hosts outside the allowlist", () => {
    const refused = (url: string, policy = strict) => expect(() => checkOutboundUrl(url, policy)).toThrow(OutboundRefused);
    refused("ftp://example.com/x");
    refused("file:///etc/passwd");
    refused("not a url");
    refused("https://user:pw@example.com/hook");
    refused("http://127.0.0.1:8080/hook");
    refused("http://[::1]/hook");
    refused("http://169.254.169.254/latest/meta-data/");
    refused("http://0x7f000001/hook");
    refused("https://example.com/hook", { ...strict, allowedHosts: ["127.0.0.1"] });
    expect(checkOutboundUrl("https://example.com/hook", strict).hostname).toBe("example.com");
    expect(checkOutboundUrl("http://127.0.0.1:1/x", dev).port).toBe("1");
  });
});

describe("sendOutbound", () => {
  test("a name is connected to at the address it resolved to, with its own Host header", async () => {
    seen = [];
    const res = await sendOutbound(`http://hooks.example.test:${server.port}/ok`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      timeoutMs: 5000,
      policy: dev,
      resolve: table({ "hooks.example.test": ["127.0.0.1"] }),
    });
    expect(res.status).toBe(200);
    expect(res.body).toBe("got {}");
    expect(seen).toEqual([{ host: `hooks.example.test:${server.port}`, path: "/ok" }]);
  });

  test("a name resolving to a private address is refused at connect time, and nothing is sent", async () => {
    seen = [];
    for (const answer of [["127.0.0.1"], ["10.0.0.7"], ["93.184.216.34", "127.0.0.1"], ["169.254.169.254"]]) {
      const sent = sendOutbound(`http://rebind.example.test:${server.port}/ok`, {
        method: "POST",
        headers: {},
        body: "{}",
        timeoutMs: 5000,
        policy: strict,
        resolve: table({ "rebind.example.test": answer }),
      });
      await expect(sent).rejects.toBeInstanceOf(OutboundRefused);
    }
    expect(seen).toEqual([]);
  });

  test("the same name is allowed on loopback only when private addresses are allowed", async () => {
    const send = (policy: typeof strict) =>
      sendOutbound(`http://local.example.test:${server.port}/ok`, { method: "GET", headers: {}, timeoutMs: 5000, policy, resolve: table({ "local.example.test": ["127.0.0.1"] }) });
    // Which address the name resolved to is not told back (internal DNS stays internal).
    const refused = await send(strict).then(() => null, (err: Error) => err.message);
    expect(refused).toBe("Refused: local.example.test resolves to an address this service may not reach");
    expect((await send(dev)).status).toBe(200);
  });

  test("a name with no address is refused", async () => {
    await expect(
      sendOutbound("http://nowhere.example.test/x", { method: "GET", headers: {}, timeoutMs: 5000, policy: strict, resolve: table({}) }),
    ).rejects.toBeInstanceOf(OutboundRefused);
  });

  test("answers are returned whatever their status; redirects are not followed", async () => {
    const send = (path: string) => sendOutbound(`http://127.0.0.1:${server.port}${path}`, { method: "POST", headers: {}, body: "b", timeoutMs: 5000, policy: dev });
    expect((await send("/fail")).status).toBe(500);
    seen = [];
    const redirect = await send("/redirect");
    expect(redirect.status).toBe(302);
    expect(seen.map((s) => s.path)).toEqual(["/redirect"]);
  });

  test("only the first bytes of a large answer are kept", async () => {
    const res = await sendOutbound(`http://127.0.0.1:${server.port}/big`, { method: "GET", headers: {}, timeoutMs: 5000, policy: dev, maxResponseBytes: 100 });
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(100);
  });

  test("no answer within the deadline is a timeout", async () => {
    const started = performance.now();
    await expect(
      sendOutbound(`http://127.0.0.1:${server.port}/slow`, { method: "POST", headers: {}, body: "", timeoutMs: 200, policy: dev }),
    ).rejects.toBeInstanceOf(OutboundTimeout);
    expect(performance.now() - started).toBeLessThan(1500);
  });
});
