/**
 * The image's HEALTHCHECK, run by Bun inside the container (the image has no curl or wget):
 *   bun packaging/healthcheck.ts [url]
 * Exits 0 when the URL answers 2xx within 3 s, 1 otherwise. Without a URL it asks /healthz on
 * METRICS_PORT when set (the only listener of `worker/main.ts`), else on PORT (3000): one
 * check for the API and the worker alike. `--any-answer` accepts any HTTP status, for the
 * storage node, which signs every request and so has no unauthenticated 200 to give.
 */
export {};

const args = process.argv.slice(2);
const anyAnswer = args.includes("--any-answer");
const given = args.find((a) => !a.startsWith("--"));
const port = process.env.METRICS_PORT || process.env.PORT || "3000";
const url = given ?? `http://127.0.0.1:${port}/healthz`;

try {
  const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  process.exit(res.ok || anyAnswer ? 0 : 1);
} catch {
  process.exit(1);
}
