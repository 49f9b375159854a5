import { createHmac, randomBytes } from "node:crypto";

/**
 * Standard Webhooks signing: the secret is `whsec_` + base64 of random bytes (the bytes are
 * the HMAC key), and `webhook-signature` lists `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`,
 * space-separated when more than one secret is valid (during a rotation).
 */

const PREFIX = "whsec_";

export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(32).toString("base64")}`;
}

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/** The three headers of a delivery; `timestamp` is the attempt's (receivers refuse old ones), in seconds. */
export function signedHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": secrets.map((s) => sign(s, id, timestamp, body)).join(" "),
  };
}
