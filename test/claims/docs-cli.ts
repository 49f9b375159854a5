import { expect } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backoff, RestClient } from "../../cli/client.ts";
import { partSizeFor, UPLOAD_DEFAULTS } from "../../cli/upload.ts";
import { findTool } from "../../tools/registry.ts";
import type { PageClaims } from "./claim.ts";
import { defaults, MiB, org } from "../support/claim-checks.ts";
import { runCli } from "../support/cli.ts";
import { newBucket } from "../support/objects.ts";

const UPLOAD = "test/e2e/cli-upload.test.ts";

/** A stand-in API on a local port: each request is answered by the next of `answers`, then 200 `{}`. */
function answering(answers: Response[]) {
  const seen: { method: string; key: string | null }[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      seen.push({ method: req.method, key: req.headers.get("idempotency-key") });
      return answers.shift() ?? Response.json({ data: [], total: 0, hasMore: false });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, seen, stop: () => server.stop(true) };
}
const failing = (status: number, headers: Record<string, string> = {}) => Response.json({ error: { code: status === 429 ? "rate_limited" : "unavailable", message: "try again" } }, { status, headers });

export default {
  page: "docs/cli.md",
  claims: [
    {
      says: "Requests that change state carry an Idempotency-Key, so the client retries them safely after a lost connection; every request is retried on network errors, 429 (honouring Retry-After), 502-504 and, when repeating is harmless, 500.",
      check: async () => {
        const tool = (name: string) => findTool(name)!;
        for (const [status, headers] of [[429, { "retry-after": "1" }], [502, {}], [503, {}], [504, {}]] as const) {
          const api = answering([failing(status, headers)]);
          try {
            await new RestClient({ url: api.url, apiKey: "k" }).call(tool("buckets_create"), { name: "x" });
            // Retried, with the same Idempotency-Key, so the service replays instead of creating twice.
            expect(api.seen.map((s) => s.method)).toEqual(["POST", "POST"]);
            expect(api.seen[0]!.key).toBeString();
            expect(api.seen[1]!.key).toBe(api.seen[0]!.key);
          } finally {
            api.stop();
          }
        }
        // 500: repeated for an idempotent tool, not for a create.
        const safe = answering([failing(500)]);
        const unsafe = answering([failing(500)]);
        try {
          await new RestClient({ url: safe.url, apiKey: "k" }).call(tool("objects_set_tags"), { id: crypto.randomUUID(), tagIds: [] });
          expect(safe.seen).toHaveLength(2);
          const refused = await new RestClient({ url: unsafe.url, apiKey: "k" }).call(tool("buckets_create"), { name: "x" }).catch((e) => e);
          expect(refused.status).toBe(500);
          expect(unsafe.seen).toHaveLength(1);
          expect(unsafe.seen[0]!.key).toBeString();
        } finally {
          safe.stop();
          unsafe.stop();
        }
        // A network error (nothing listens on port 9) is retried up to the attempts, then reported.
        const down = await new RestClient({ url: "http://127.0.0.1:9", apiKey: "k", attempts: 2 }).call(tool("buckets_list"), {}).catch((e) => e);
        expect(down.code).toBe("network_error");
      },
    },
    {
      says: "| --tags a,b | none | up to 10 labels applied to every object |",
      check: async (server) => {
        const o = await org(server);
        const bucket = await newBucket(o);
        const presign = (n: number) => o.admin.post("/api/presign/upload", { bucketId: bucket.id, key: `t${n}.txt`, contentType: "text/plain", tags: Array.from({ length: n }, (_, i) => `label ${i}`) });
        expect((await presign(10)).status).toBe(200);
        const over = await presign(11);
        expect([over.status, over.body.error.details[0].path]).toEqual([400, "tags"]);
      },
    },
    {
      says: "| --threshold <size> | 16MiB | files this large or larger go multipart | | --part-size <size> | 16MiB | at least 5MiB; raised automatically when a file would need more than 10,000 parts |",
      check: async () => {
        expect([UPLOAD_DEFAULTS.threshold, UPLOAD_DEFAULTS.partSize]).toEqual([16 * MiB, 16 * MiB]);
        expect(partSizeFor(100 * MiB, 16 * MiB)).toBe(16 * MiB);
        // 200 GiB in 16 MiB parts would be 12,800 parts: the part grows until 10,000 hold the file.
        const big = 200 * 1024 * MiB;
        const part = partSizeFor(big, 16 * MiB);
        expect(Math.ceil(big / part)).toBeLessThanOrEqual(10_000);
        expect(part).toBeGreaterThan(16 * MiB);
      },
    },
    {
      says: "A file whose key an object already holds is refused, naming the object and --force, and the command exits 1.",
      by: { file: "test/e2e/cli-upload-overwrite.test.ts", test: "a file onto a taken key is refused (exit 1, naming --force) and the object is unchanged; --force replaces it" },
    },
    {
      says: "so another writer storing the key in between makes it fail rather than be replaced.",
      by: { file: "test/e2e/cli-upload-overwrite.test.ts", test: "the API's write condition: a URL presigned with overwrite false fails at the PUT when another writer stored the key first" },
    },
    { says: "at least 5MiB;", by: { file: UPLOAD, test: "usage errors: --key with several files, a part size under 5 MiB, a missing file" } },
    { says: "files this large or larger go multipart", by: { file: UPLOAD, test: "a 12 MiB file goes multipart in 5 MiB parts; the download has the same SHA-256" } },
    { says: "Sizes accept 16MiB, 16M (binary), 16MB (decimal) or plain bytes.", by: { file: "test/unit/cli-flags.test.ts", test: "sizes: binary and decimal units" } },
    { says: "A failed part (lost connection, storage 5xx, an expired URL) is retried with a freshly signed URL", by: { file: UPLOAD, test: "a failed part is retried" } },
    {
      says: "after about 0.5 s, 1 s, 2 s ... (with jitter; --retries).",
      check: async () => {
        for (const [attempt, full] of [[1, 500], [2, 1000], [3, 2000]] as const) {
          for (let i = 0; i < 50; i++) {
            const wait = backoff(attempt);
            expect(wait).toBeGreaterThanOrEqual(full / 2);
            expect(wait).toBeLessThanOrEqual(full);
          }
        }
      },
    },
    { says: "The service's request rate limits (300 a minute per key, 1200 per organization, by default) apply:", check: defaults({ RATE_LIMIT_PER_MINUTE: 300, ORG_RATE_LIMIT_PER_MINUTE: 1200 }) },
    {
      says: "the bytes are streamed to <file>.part and renamed when complete (and their count checked against Content-Length).",
      check: async () => {
        // Storage that announces 20 bytes and sends 10, or announces exactly what it sends.
        let announced = 20;
        const storage = createServer((socket) => {
          socket.once("data", () => socket.end(`HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ${announced}\r\nConnection: close\r\n\r\n0123456789`));
        });
        await new Promise<void>((r) => storage.listen(0, "127.0.0.1", r));
        const storageUrl = `http://127.0.0.1:${(storage.address() as { port: number }).port}/short.bin`;
        const api = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ url: storageUrl, key: "short.bin", expiresAt: new Date(Date.now() + 60_000).toISOString(), expiresIn: 60 }) });
        const dir = mkdtempSync(join(tmpdir(), "claims-cli-"));
        try {
          const target = join(dir, "short.bin");
          const run = () => runCli(["download", crypto.randomUUID(), "-o", target], { url: `http://127.0.0.1:${api.port}`, key: "k".repeat(64) });
          const short = await run();
          expect(short.code).toBe(1);
          expect([existsSync(target), existsSync(`${target}.part`)]).toEqual([false, false]);
          announced = 10;
          const whole = await run();
          expect(whole.code).toBe(0);
          expect(readFileSync(target, "utf8")).toBe("0123456789");
        } finally {
          api.stop(true);
          storage.close();
          rmSync(dir, { recursive: true, force: true });
        }
      },
    },
    { says: "| 130 | interrupted (Ctrl-C); an interrupted upload can be resumed |", by: { file: UPLOAD, test: "an interrupted multipart upload resumes: the second run uploads only the missing parts" } },
    { says: "MEDIA_CLI_TEST_STOP_AFTER_PARTS=N interrupts an upload (exit 130) after N parts, as Ctrl-C would;", by: { file: UPLOAD, test: "an interrupted multipart upload resumes: the second run uploads only the missing parts" } },
    { says: "MEDIA_CLI_TEST_FAIL_PARTS=2,5 makes the first attempt of those parts fail.", by: { file: UPLOAD, test: "a failed part is retried" } },
  ],
  notPromises: [
    { says: "| npx media | 698 ± 19 | 709 ± 40 | | npm link | 106 ± 5 | 118 ± 7 | | compiled binary | 77 ± 4 | 86 ± 6 |", why: "start times measured by npm run bench -- cli-start (bench/results/cli-start.md: hyperfine, 20 runs, load 2.7)" },
    { says: "strings and numbers: --name photos, --limit 20 (--limit=20 works too);", why: "example values of the flag syntax (the syntax itself: test/unit/cli-flags.test.ts)" },
  ],
} satisfies PageClaims;
