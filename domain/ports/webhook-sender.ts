/**
 * Sends one webhook request. The adapter (worker/webhook-sender.ts, over net/outbound.ts) decides
 * which addresses may be reached; it resolves with the receiver's status, whatever it is, and
 * rejects with an Error whose message says why no answer came (refused address, timeout,
 * connection error).
 */
export interface WebhookSender {
  post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number }>;
}
