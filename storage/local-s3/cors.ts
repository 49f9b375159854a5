// Bucket CORS: the configuration document, preflight (OPTIONS) answers and the
// headers added to actual responses, following S3's matching rules (first rule
// whose origin, method and requested headers all match wins; a single "*" is a
// wildcard in AllowedOrigin and AllowedHeader).

import { Errors, S3Error } from "./errors.ts";
import { childrenNamed, childText, parseXml, xmlDocument } from "./xml.ts";

export interface CorsRule {
  id?: string;
  allowedOrigins: string[];
  allowedMethods: string[];
  allowedHeaders: string[];
  exposeHeaders: string[];
  maxAgeSeconds?: number;
}

const METHODS = new Set(["GET", "PUT", "HEAD", "POST", "DELETE"]);

export function parseCorsConfiguration(body: string): CorsRule[] {
  const root = parseXml(body);
  if (root.name !== "CORSConfiguration") throw Errors.malformedXML();
  const rules = childrenNamed(root, "CORSRule").map((r): CorsRule => {
    const texts = (name: string) => childrenNamed(r, name).map((n) => n.text.trim());
    const rule: CorsRule = {
      allowedOrigins: texts("AllowedOrigin"),
      allowedMethods: texts("AllowedMethod"),
      allowedHeaders: texts("AllowedHeader"),
      exposeHeaders: texts("ExposeHeader"),
    };
    const id = childText(r, "ID");
    if (id !== undefined) rule.id = id;
    const maxAge = childText(r, "MaxAgeSeconds");
    if (maxAge !== undefined) {
      if (!/^\d+$/.test(maxAge.trim())) throw Errors.malformedXML();
      rule.maxAgeSeconds = Number(maxAge.trim());
    }
    if (rule.allowedOrigins.length === 0 || rule.allowedMethods.length === 0) throw Errors.malformedXML();
    for (const m of rule.allowedMethods)
      if (!METHODS.has(m)) throw Errors.invalidRequest(`Found unsupported HTTP method in CORS config. Unsupported method is ${m}`);
    for (const o of rule.allowedOrigins)
      if (o.split("*").length > 2) throw Errors.invalidRequest(`AllowedOrigin "${o}" can not have more than one wildcard.`);
    for (const h of rule.allowedHeaders)
      if (h.split("*").length > 2) throw Errors.invalidRequest(`AllowedHeader "${h}" can not have more than one wildcard.`);
    return rule;
  });
  if (rules.length === 0 || rules.length > 100) throw Errors.malformedXML();
  return rules;
}

export function corsConfigurationXml(rules: CorsRule[]): string {
  return xmlDocument("CORSConfiguration", {
    CORSRule: rules.map((r) => ({
      ID: r.id,
      AllowedHeader: r.allowedHeaders,
      AllowedMethod: r.allowedMethods,
      AllowedOrigin: r.allowedOrigins,
      ExposeHeader: r.exposeHeaders,
      MaxAgeSeconds: r.maxAgeSeconds,
    })),
  });
}

function wildcardMatch(pattern: string, value: string, caseInsensitive: boolean): boolean {
  if (caseInsensitive) {
    pattern = pattern.toLowerCase();
    value = value.toLowerCase();
  }
  const star = pattern.indexOf("*");
  if (star < 0) return pattern === value;
  const head = pattern.slice(0, star);
  const tail = pattern.slice(star + 1);
  return value.length >= head.length + tail.length && value.startsWith(head) && value.endsWith(tail);
}

function findRule(rules: CorsRule[], origin: string, method: string, requestHeaders: string[]): CorsRule | undefined {
  return rules.find(
    (r) =>
      r.allowedOrigins.some((o) => wildcardMatch(o, origin, false)) &&
      r.allowedMethods.includes(method) &&
      requestHeaders.every((h) => r.allowedHeaders.some((a) => wildcardMatch(a, h, true))),
  );
}

/** Headers common to preflight and actual responses for a matched rule. */
function ruleHeaders(rule: CorsRule, origin: string): Record<string, string> {
  const h: Record<string, string> = {};
  if (rule.allowedOrigins.includes("*")) h["access-control-allow-origin"] = "*";
  else {
    h["access-control-allow-origin"] = origin;
    h["access-control-allow-credentials"] = "true";
  }
  h["access-control-allow-methods"] = rule.allowedMethods.join(", ");
  if (rule.exposeHeaders.length > 0) h["access-control-expose-headers"] = rule.exposeHeaders.join(", ");
  if (rule.maxAgeSeconds !== undefined) h["access-control-max-age"] = String(rule.maxAgeSeconds);
  return h;
}

const VARY = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method";

/** Answer an OPTIONS preflight; throws S3Error when it is not allowed. */
export function preflight(rules: CorsRule[] | undefined, headers: Headers): Record<string, string> {
  const origin = headers.get("origin");
  const method = headers.get("access-control-request-method");
  if (origin === null) throw new S3Error("BadRequest", "Insufficient information. Origin request header needed.", 400);
  if (method === null || !METHODS.has(method))
    throw new S3Error("BadRequest", `Invalid Access-Control-Request-Method: ${method ?? "null"}`, 400);
  if (!rules) throw new S3Error("AccessForbidden", "CORSResponse: CORS is not enabled for this bucket.", 403, { Method: method, ResourceType: "BUCKET" });
  const requested = (headers.get("access-control-request-headers") ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== "");
  const rule = findRule(rules, origin, method, requested);
  if (!rule)
    throw new S3Error(
      "AccessForbidden",
      "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.",
      403,
      { Method: method, ResourceType: "OBJECT" },
    );
  const h = ruleHeaders(rule, origin);
  if (requested.length > 0) h["access-control-allow-headers"] = requested.join(", ");
  h.vary = VARY;
  return h;
}

/** Headers to add to an actual (non-preflight) response. */
export function corsResponseHeaders(rules: CorsRule[] | undefined, origin: string | null, method: string): Record<string, string> {
  if (!rules || origin === null) return {};
  const rule = findRule(rules, origin, method, []);
  return rule ? { ...ruleHeaders(rule, origin), vary: VARY } : { vary: VARY };
}
