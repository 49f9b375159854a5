import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually, WAIT_CEILING_MS } from "../support/eventually.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { type Receiver, startReceiver } from "../support/webhook-receiver.ts";

/**
 * Webhook endpoints on private, loopback, link-local or metadata addresses are refused, on a
 * server configured as in production: no private addresses, no host allowlist (the other tests'
 * servers reach loopback receivers only). Its own file, so that no other server
 * shares its database and queue and delivers its events under another configuration.
 */

const r = startReceiver();
let strict: TestServer;
let org: TestOrg;

beforeAll(async () => {
  strict = await startServer({ env: { WEBHOOK_ALLOW_PRIVATE: "", WEBHOOK_ALLOWED_HOSTS: "", WEBHOOK_BACKOFF_MS: "100", WEBHOOK_ATTEMPTS: "3" } });
  org = await newOrg(strict, "Strict");
});
afterAll(async () => {
  r.stop();
  await strict.stop();
});

async function deliveries(endpointId: string) {
  const res = await org.admin.get(`/api/webhooks/${endpointId}/deliveries`);
  expect(res.status).toBe(200);
  return res.body.data as { status: string; attempts: { statusCode: number | null; succeeded: boolean; error: string | null }[] }[];
}

describe("addresses that are refused", () => {
  test("private, loopback, link-local and metadata literals are refused when the endpoint is created or changed", async () => {
    for (const url of [
      "http://127.0.0.1:8080/hook",
      "http://[::1]/hook",
      "http://10.1.2.3/hook",
      "http://192.168.0.10/hook",
      "http://169.254.169.254/latest/meta-data/",
      "http://[fd00::1]/hook",
      "http://[::ffff:127.0.0.1]/hook",
      "http://0.0.0.0/hook",
      "https://user:password@example.com/hook",
      "ftp://example.com/hook",
    ]) {
      const res = await org.admin.post("/api/webhooks", { url });
      expect({ url, status: res.status, code: res.body.error?.code }).toEqual({ url, status: 400, code: "validation_error" });
    }
    const ok = await org.admin.post("/api/webhooks", { url: "https://hooks.example.com/in" });
    expect(ok.status).toBe(201);
    const changed = await org.admin.put(`/api/webhooks/${ok.body.id}`, { url: "http://127.0.0.1/x" });
    expect(changed.status).toBe(400);
    // Disabled straight away: nothing in this test may try to reach the made-up host.
    await org.admin.delete(`/api/webhooks/${ok.body.id}`);
  });

  test("a name that resolves to a loopback address is refused at connect time, and the receiver gets nothing", async () => {
    const port = new URL(r.url).port;
    const ep = await org.admin.post("/api/webhooks", { url: `http://localhost:${port}/hooks` });
    expect(ep.status).toBe(201);
    await org.admin.post(`/api/webhooks/${ep.body.id}/test`);
    const [d] = await eventually(async () => {
      const list = await deliveries(ep.body.id);
      return list[0]?.status === "failed" ? list : undefined;
    }, { timeoutMs: WAIT_CEILING_MS });
    expect(d!.attempts.length).toBe(3);
    for (const a of d!.attempts) expect(a).toMatchObject({ statusCode: null, succeeded: false, error: "Refused: localhost resolves to an address this service may not reach" });
    expect(r.received).toEqual([]);
  }, 3 * WAIT_CEILING_MS);
});
