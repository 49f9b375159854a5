import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eventually } from "../support/eventually.ts";
import { Api } from "../support/http.ts";
import { png } from "../support/media-files.ts";
import { freePort } from "../support/processes.ts";
import { upload } from "../support/upload.ts";

/**
 * The container image (packaging/): built with podman from Debian's packages only
 * (packaging/build-image.sh), then run: probes, metrics, an upload end to end with its
 * thumbnail, and a clean exit on `podman stop`. Then packaging/compose.yaml with
 * podman-compose: PostgreSQL, Redis, the storage node, the API and a worker, each in its own
 * container, an upload whose thumbnail the worker container makes. Building takes minutes and
 * needs podman, podman-compose, debootstrap and Debian's mirror, so it runs when
 * TEST_CONTAINER=1, and is reported as skipped otherwise. Where the default OCI runtime cannot
 * run containers (crun under cgroups v1 in a sandbox), point CONTAINERS_CONF at a file with
 * `[engine] runtime = "runc"` (and lowered `default_ulimits` if raising them is not allowed).
 */
const enabled = process.env.TEST_CONTAINER === "1";
const podman = ["podman"];
const missing = ["podman", "podman-compose", "debootstrap", "git"].filter((c) => !Bun.which(c));
const why = !enabled ? "set TEST_CONTAINER=1 to build and run the image" : missing.length > 0 ? `${missing.join(", ")} not installed` : null;
const tag = "localhost/media-storage:test";
const name = `media-test-${process.pid}`;
// Lowered limits and the host's network work under restricted sandboxes too; harmless elsewhere.
const runFlags = ["--network=host"];

async function run(cmd: string[], timeoutMs = 600_000): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn(cmd, { cwd: join(import.meta.dir, "../.."), stdout: "pipe", stderr: "pipe", env: { ...process.env } });
  const timer = setTimeout(() => proc.kill(), timeoutMs);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, out, err };
}

describe.skipIf(why !== null)(`container image${why ? ` (skipped: ${why})` : ""}`, () => {
  const key = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex");
  let port: number;
  let ops: number;

  beforeAll(async () => {
    const built = await run(["packaging/build-image.sh", tag], 1_200_000);
    if (built.code !== 0) throw new Error(`build failed:\n${built.out.slice(-3000)}\n${built.err.slice(-3000)}`);
    [port, ops] = [await freePort(), await freePort()];
    const storage = await freePort();
    const started = await run([
      ...podman, "run", "-d", "--name", name, ...runFlags,
      "-e", `PORT=${port}`, "-e", `STORAGE_PORT=${storage}`, "-e", `METRICS_PORT=${ops}`, "-e", `INITIAL_ADMIN_KEY=${key}`,
      tag,
    ]);
    if (started.code !== 0) throw new Error(`run failed: ${started.err}`);
    await eventually(async () => ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok ? true : undefined), { what: "the container to answer", timeoutMs: 60_000 });
  }, 1_300_000);

  afterAll(async () => {
    await run([...podman, "rm", "-f", "-v", name]);
  });

  test("serves probes, metrics and an upload with its thumbnail; podman stop drains and exits 0", async () => {
    const ready = await fetch(`http://127.0.0.1:${ops}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: object }).checks).toMatchObject({ postgres: { ok: true }, storage: { ok: true } });
    const api = new Api(`http://127.0.0.1:${port}`, key);
    expect((await api.get("/api/me")).body.organization.name).toBe("Default");
    const bucket = (await api.post("/api/buckets", { name: "in-a-container" })).body;
    const object = await upload(api, bucket.id, "hello.png", new Uint8Array(await png(200, 100)), { contentType: "image/png" });
    await eventually(async () => ((await api.get(`/api/media/${object.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "the thumbnail" });
    expect(await (await fetch(`http://127.0.0.1:${ops}/metrics`)).text()).toContain('media_uploaded_bytes_total{role="server"}');

    const stopped = await run([...podman, "stop", "-t", "30", name]);
    expect(stopped.code).toBe(0);
    expect((await run([...podman, "inspect", name, "--format", "{{.State.ExitCode}}"])).out.trim()).toBe("0");
    expect((await run([...podman, "logs", name])).err).toContain("server stopped");
  }, 120_000);
});

describe.skipIf(why !== null)(`compose: the service, a worker, PostgreSQL, Redis and storage${why ? ` (skipped: ${why})` : ""}`, () => {
  const project = `media-compose-${process.pid}`;
  const key = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex");
  let env: Record<string, string>;
  let api: Api;
  const compose = (...args: string[]) => run(["podman-compose", "-p", project, "-f", "packaging/compose.yaml", ...args], 900_000);

  beforeAll(async () => {
    const [mediaPort, storagePort] = [await freePort(), await freePort()];
    env = {
      MEDIA_IMAGE: tag,
      MEDIA_PORT: String(mediaPort),
      STORAGE_PORT: String(storagePort),
      S3_PUBLIC_ENDPOINT: `http://127.0.0.1:${storagePort}`,
      POSTGRES_PASSWORD: crypto.randomUUID(),
      S3_ACCESS_KEY_ID: "COMPOSETEST",
      S3_SECRET_ACCESS_KEY: crypto.randomUUID(),
      INITIAL_ADMIN_KEY: key,
    };
    Object.assign(process.env, env);
    const up = await compose("up", "-d");
    if (up.code !== 0) throw new Error(`compose up failed:\n${up.out.slice(-3000)}\n${up.err.slice(-3000)}`);
    api = new Api(`http://127.0.0.1:${mediaPort}`, key);
    // The API container restarts until PostgreSQL accepts connections.
    await eventually(async () => ((await api.get("/api/me").catch(() => null))?.status === 200 ? true : undefined), { what: "the API container to serve", timeoutMs: 180_000, intervalMs: 1000 });
  }, 1_000_000);

  afterAll(async () => {
    // Containers first with their anonymous volumes (the images declare /data), then the named ones and the network.
    const ids = (await run([...podman, "ps", "-aq", "--filter", `label=io.podman.compose.project=${project}`])).out.split("\n").filter(Boolean);
    if (ids.length > 0) await run([...podman, "rm", "-f", "-v", ...ids]);
    await compose("down", "-v");
  }, 120_000);

  test("an upload through the published ports; the worker container makes its thumbnail; down stops every container cleanly", async () => {
    const bucket = (await api.post("/api/buckets", { name: "composed" })).body;
    const object = await upload(api, bucket.id, "composed.png", new Uint8Array(await png(300, 150)), { contentType: "image/png" });
    await eventually(async () => ((await api.get(`/api/media/${object.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "the worker's thumbnail", timeoutMs: 60_000 });
    const logs = await run([...podman, "logs", `${project}_worker_1`]);
    expect(logs.err).toContain("worker started");
    const down = await compose("stop");
    expect(down.code).toBe(0);
    for (const service of ["media", "worker"]) {
      expect((await run([...podman, "inspect", `${project}_${service}_1`, "--format", "{{.State.ExitCode}}"])).out.trim()).toBe("0");
    }
  }, 180_000);
});

