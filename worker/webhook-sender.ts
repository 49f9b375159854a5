import type { WebhookConfig } from "../domain/core/config.ts";
import type { WebhookSender } from "../domain/ports/webhook-sender.ts";
import { sendOutbound } from "../net/outbound.ts";

/** Webhook requests over the SSRF-safe outbound request, with the configured address policy and deadline. */
export function webhookSender(config: WebhookConfig): WebhookSender {
  const policy = { allowPrivate: config.allowPrivate, allowedHosts: config.allowedHosts };
  return {
    post: async (url, headers, body) => {
      const res = await sendOutbound(url, { method: "POST", headers, body, timeoutMs: config.timeoutMs, policy, maxResponseBytes: 1024 });
      return { status: res.status };
    },
  };
}
