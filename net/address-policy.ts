import ipaddr from "ipaddr.js";

/**
 * Which addresses an outbound request made on a user's behalf (a webhook delivery, a fetch of a
 * URL to import) may connect to. Only public unicast addresses, unless private ones are allowed
 * for development; cloud metadata services never, whatever the setting, since nothing a user
 * sends us should ever read the host's own credentials.
 */

/** Ranges a development setup may reach when private addresses are allowed. */
const PRIVATE_RANGES = new Set(["loopback", "private", "linkLocal", "uniqueLocal", "carrierGradeNat"]);

/** Instance metadata endpoints (AWS, GCP, Azure, OpenStack; Alibaba; AWS over IPv6). */
const METADATA = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"]);

const DESCRIPTION: Record<string, string> = {
  loopback: "a loopback address",
  private: "a private address",
  linkLocal: "a link-local address",
  uniqueLocal: "a unique-local address",
  carrierGradeNat: "a shared (carrier-grade NAT) address",
  unspecified: "the unspecified address",
  broadcast: "a broadcast address",
  multicast: "a multicast address",
  reserved: "a reserved address",
  ipv4Mapped: "an IPv4-mapped address",
};

export interface AddressPolicy {
  /** Allow loopback, private, link-local and unique-local addresses (development only). */
  allowPrivate: boolean;
}

export const isIpLiteral = (host: string): boolean => ipaddr.isValid(stripBrackets(host));

const stripBrackets = (host: string) => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host);

/** Why `address` (an IP literal) may not be connected to, or null when it may. */
export function addressRefusal(address: string, policy: AddressPolicy): string | null {
  const raw = stripBrackets(address);
  if (!ipaddr.isValid(raw)) return `'${address}' is not an IP address`;
  // An IPv4-compatible address (::a.b.c.d, deprecated by RFC 4291) is outside every range
  // ipaddr.js names, so it would pass as unicast; a stack that still routes it reaches the
  // IPv4 address inside, so it is never allowed.
  const parsed = ipaddr.parse(canonicalV6(raw));
  if (parsed.kind() === "ipv6" && isIpv4Compatible(parsed as ipaddr.IPv6)) return `${raw} is an IPv4-compatible address`;
  // An IPv4-mapped IPv6 address is the IPv4 address it maps: judged as that.
  const ip = ipaddr.process(raw);
  const normal = ip.toString();
  if (METADATA.has(normal)) return `${normal} is a cloud metadata address`;
  const range = ip.range();
  if (range === "unicast") return null;
  if (policy.allowPrivate && PRIVATE_RANGES.has(range)) return null;
  return `${normal} is ${DESCRIPTION[range] ?? `a special-purpose address (${range})`}`;
}

/**
 * IPv6 text as the WHATWG URL parser (and the system's) reads it: ipaddr.js reads "::127.0.0.1"
 * as IPv4-mapped, where the socket layer reads ::7f00:1.
 */
function canonicalV6(raw: string): string {
  if (!raw.includes(":")) return raw;
  try {
    return new URL(`http://[${raw}]/`).hostname.slice(1, -1);
  } catch {
    return raw;
  }
}

/** ::/96 less :: and ::1 (which have ranges of their own). */
function isIpv4Compatible(ip: ipaddr.IPv6): boolean {
  const p = ip.parts;
  return p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7]! > 1);
}
