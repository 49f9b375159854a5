import { lookup as dnsLookup } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupAddress } from "node:dns";
import { type AddressPolicy, addressRefusal, isIpLiteral } from "./address-policy.ts";

/**
 * An HTTP request to a URL a user gave us, made so that it can only reach what the address
 * policy allows: the host is resolved, every address it resolves to is checked, and the
 * connection goes to a checked address (the resolution happens inside the connect, so a DNS
 * answer that changes between a check and the connect cannot slip a private address in).
 * Redirects are not followed: a 3xx is an answer like any other.
 */

export interface OutboundPolicy extends AddressPolicy {
  /** When set, only these host names or IP literals may be reached at all (checked before any lookup). */
  allowedHosts: readonly string[] | null;
}

/** The request was not made: the URL or the address it resolves to is not allowed. */
export class OutboundRefused extends Error {
  override readonly name = "OutboundRefused";
}

/** No complete answer within the deadline. */
export class OutboundTimeout extends Error {
  override readonly name = "OutboundTimeout";
}

export type Resolver = (host: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/**
 * Checks what can be checked without the network: scheme, credentials in the URL, the host
 * allowlist, and IP literals. Throws OutboundRefused; returns the parsed URL.
 */
export function checkOutboundUrl(raw: string, policy: OutboundPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused("Not a valid URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new OutboundRefused("Only http and https URLs can be used");
  if (url.username || url.password) throw new OutboundRefused("The URL must not carry credentials");
  const host = url.hostname.toLowerCase();
  if (policy.allowedHosts && !policy.allowedHosts.includes(host)) throw new OutboundRefused(`${host} is not among the hosts this service may reach`);
  if (isIpLiteral(host)) {
    const why = addressRefusal(host, policy);
    if (why) throw new OutboundRefused(`Refused: ${why}`);
  }
  return url;
}

export interface OutboundRequest {
  method: "POST" | "GET";
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** Bytes of the answer kept; the rest is not read. */
  maxResponseBytes?: number;
  policy: OutboundPolicy;
  /** Name resolution (tests give names without asking DNS); default: the system's. */
  resolve?: Resolver;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The first maxResponseBytes of the answer, as text. */
  body: string;
}

/**
 * Called by the HTTP client when it connects: resolve, refuse if any address is refused (a
 * name with one private answer among public ones is refused whole), connect to what was checked.
 */
function guardedLookup(policy: OutboundPolicy, resolve: Resolver) {
  return (host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    resolve(host).then(
      (addresses) => {
        if (addresses.length === 0) return callback(new OutboundRefused(`${host} has no address`));
        for (const a of addresses) {
          // The user named the host, not the address: which internal address a name resolves
          // to is the network's business, so it is not told back (only that it is not allowed).
          if (addressRefusal(a.address, policy)) return callback(new OutboundRefused(`Refused: ${host} resolves to an address this service may not reach`));
        }
        if (options?.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err) => callback(err),
    );
  };
}

/** An answer whose body is read by the caller, as it arrives. */
export interface OutboundStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: http.IncomingMessage;
}

/**
 * A GET whose answer is handed over as soon as its headers arrive (the caller streams the body,
 * and destroys it to stop). The same checks as sendOutbound: the URL first, every address at
 * connect time. Redirects are not followed; a caller that follows one calls this again for the
 * new URL, so every hop is checked. `signal` aborts the request and the body.
 */
export function openOutbound(raw: string, req: { headers: Record<string, string>; policy: OutboundPolicy; signal: AbortSignal; resolve?: Resolver }): Promise<OutboundStream> {
  const url = checkOutboundUrl(raw, req.policy);
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolvePromise, reject) => {
    const request = client.request(
      url,
      { method: "GET", headers: req.headers, lookup: guardedLookup(req.policy, req.resolve ?? systemResolver) as never, agent: false, signal: req.signal },
      (res) => resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body: res }),
    );
    request.on("error", reject);
    request.end();
  });
}

export function sendOutbound(raw: string, req: OutboundRequest): Promise<OutboundResponse> {
  const url = checkOutboundUrl(raw, req.policy);
  const limit = req.maxResponseBytes ?? 4096;
  const lookup = guardedLookup(req.policy, req.resolve ?? systemResolver);
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolvePromise, reject) => {
    let settled = false;
    const finish = (err: Error | null, value?: OutboundResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolvePromise(value!);
    };
    const request = client.request(
      url,
      { method: req.method, headers: req.headers, lookup: lookup as never, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          if (size < limit) chunks.push(chunk.subarray(0, limit - size));
          size += chunk.length;
          if (size >= limit) {
            // Enough of it: the status is what matters, the rest is not worth waiting for.
            finish(null, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") });
            res.destroy();
          }
        });
        res.on("end", () => finish(null, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", (err) => finish(err));
      },
    );
    const timer = setTimeout(() => {
      const err = new OutboundTimeout(`No complete answer within ${req.timeoutMs} ms`);
      finish(err);
      request.destroy(err);
    }, req.timeoutMs);
    request.on("error", (err) => finish(err));
    request.end(req.body);
  });
}
