// One pass: it reads packaging/ and starts its own server on the embedded backends; the run's database and Redis play no part.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { loadConfig } from "../../app/config.ts";
import { type Child, freePort, spawnScript, untilServing } from "../support/processes.ts";
import { seedDataDir } from "../support/server.ts";

/**
 * What an operator runs as is: the Kubernetes manifests (packaging/kubernetes), checked
 * against the Kubernetes API's own schemas (kubernetes-models' validators, generated from the
 * API's OpenAPI document) since no cluster runs here; the compose file; the image's
 * Containerfile and its healthcheck script.
 */
const root = join(import.meta.dir, "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");
const k8sDir = "packaging/kubernetes";

type Doc = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: any; data?: Record<string, string> };
const manifestFiles = readdirSync(join(root, k8sDir)).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml").sort();
const docs: Doc[] = manifestFiles.flatMap((f) => {
  const parsed = Bun.YAML.parse(read(`${k8sDir}/${f}`)) as Doc | Doc[];
  return Array.isArray(parsed) ? parsed : [parsed];
});
const find = (kind: string, name: string) => {
  const doc = docs.find((d) => d.kind === kind && d.metadata.name === name);
  if (!doc) throw new Error(`no ${kind} ${name} in ${k8sDir}`);
  return doc;
};
const deployments = () => docs.filter((d) => d.kind === "Deployment");
const configMap = () => find("ConfigMap", "media-config").data!;
const configSource = read("app/config.ts");

/**
 * Validates `doc` with the schema of its kind and reports fields the schema does not have.
 * The generated validators accept unknown fields (as the API server does, dropping them), so a
 * misspelled `readinesProbe` would pass unseen: the document goes in behind a proxy that notes
 * every field the validator reads, and an object whose keys the validator never enumerated (a
 * map such as labels is enumerated) may hold only fields it read.
 */
async function schemaProblems(doc: Doc): Promise<string[]> {
  let model: { prototype: { validate(this: unknown): void } };
  try {
    model = (await import(`kubernetes-models/${doc.apiVersion}/${doc.kind}`))[doc.kind];
  } catch {
    return [`${doc.apiVersion} ${doc.kind} is not a kind of the Kubernetes API`];
  }
  const seen = new Map<object, { path: string; read: Set<PropertyKey>; enumerated: boolean }>();
  const wrap = (value: unknown, path: string): unknown => {
    if (value === null || typeof value !== "object") return value;
    const entry = { path, read: new Set<PropertyKey>(), enumerated: false };
    seen.set(value, entry);
    const children = new Map<PropertyKey, unknown>();
    return new Proxy(value, {
      get(target, key) {
        entry.read.add(key);
        const v = Reflect.get(target, key);
        if (typeof key !== "string" || v === null || typeof v !== "object") return v;
        if (!children.has(key)) children.set(key, wrap(v, `${path}/${key}`));
        return children.get(key);
      },
      has(target, key) {
        entry.read.add(key);
        return Reflect.has(target, key);
      },
      ownKeys(target) {
        entry.enumerated = true;
        return Reflect.ownKeys(target);
      },
    });
  };
  try {
    model.prototype.validate.call(wrap(doc, ""));
  } catch (err) {
    return [(err as Error).message];
  }
  const unknown: string[] = [];
  for (const [object, entry] of seen) {
    if (Array.isArray(object) || entry.enumerated) continue;
    for (const key of Object.keys(object)) if (!entry.read.has(key)) unknown.push(`${entry.path}/${key}: no such field`);
  }
  return unknown;
}

type Container = { name: string; command?: string[]; ports?: { name: string; containerPort: number }[]; env?: { name: string; value?: string; valueFrom?: any }[]; envFrom?: any[]; resources?: any; startupProbe?: any; readinessProbe?: any; livenessProbe?: any; lifecycle?: any };
const containersOf = (d: Doc): Container[] => d.spec.template.spec.containers;
/** The variables a container gets: its env entries and every key of the ConfigMaps it takes whole. */
function envNames(c: Container): string[] {
  const fromMaps = (c.envFrom ?? []).flatMap((e) => Object.keys(find("ConfigMap", e.configMapRef.name).data!));
  return [...fromMaps, ...(c.env ?? []).map((e) => e.name)];
}
const CREDENTIALS = ["DATABASE_URL", "DATABASE_READ_URL", "REDIS_URL", "QUEUE_REDIS_URL", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "JWT_SECRET", "INITIAL_ADMIN_KEY", "METRICS_TOKEN", "MEILISEARCH_KEY", "STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET"];

describe("Kubernetes manifests (packaging/kubernetes)", () => {
  test("the schema check refuses a misspelled field, a wrong type and a missing required field", async () => {
    const ok: Doc = { apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { selector: { a: "b" }, ports: [{ port: 80, targetPort: "http" }] } };
    expect(await schemaProblems(ok)).toEqual([]);
    expect(await schemaProblems({ ...ok, spec: { ...ok.spec, selectr: { a: "b" } } })).toEqual(["/spec/selectr: no such field"]);
    expect((await schemaProblems({ ...ok, spec: { ...ok.spec, ports: [{ port: "eighty" }] } })).join()).toContain("/spec/ports/0/port");
    expect((await schemaProblems({ ...ok, spec: { ports: [{ targetPort: 80 }] } })).join()).toContain("port");
    expect(await schemaProblems({ ...ok, kind: "Servce" })).toEqual(["v1 Servce is not a kind of the Kubernetes API"]);
  });

  test("every document is valid against its kind's Kubernetes schema, and the kustomization lists every file", async () => {
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) expect({ doc: `${doc.kind} ${doc.metadata.name}`, problems: await schemaProblems(doc) }).toEqual({ doc: `${doc.kind} ${doc.metadata.name}`, problems: [] });
    const kustomization = Bun.YAML.parse(read(`${k8sDir}/kustomization.yaml`)) as { resources: string[] };
    expect([...kustomization.resources].sort()).toEqual(manifestFiles);
  });

  test("an API Deployment with its Service, a worker Deployment, a migration Job, a PodDisruptionBudget for each Deployment; no Secret", () => {
    expect(docs.map((d) => `${d.kind} ${d.metadata.name}`).sort()).toEqual([
      "ConfigMap media-config",
      "Deployment media-api",
      "Deployment media-worker",
      "Job media-migrate",
      "PodDisruptionBudget media-api",
      "PodDisruptionBudget media-worker",
      "Service media-api",
    ]);
    for (const d of deployments()) {
      const labels = d.spec.template.metadata.labels;
      expect(d.spec.selector.matchLabels).toEqual(labels);
      const pdb = find("PodDisruptionBudget", d.metadata.name);
      expect(pdb.spec.selector.matchLabels).toEqual(labels);
      expect(pdb.spec.minAvailable).toBeLessThan(d.spec.replicas);
    }
    const api = find("Deployment", "media-api");
    const service = find("Service", "media-api");
    expect(service.spec.selector).toEqual(api.spec.template.metadata.labels);
    const http = containersOf(api)[0]!.ports!.find((p) => p.name === service.spec.ports[0].targetPort);
    expect(http?.containerPort).toBe(Number(configMap().PORT));
  });

  test("credentials only from the Secret `media` by reference; every variable is one app/config.ts reads, and the set loads", () => {
    for (const name of CREDENTIALS) expect(Object.keys(configMap())).not.toContain(name);
    const env: Record<string, string> = { ...configMap() };
    for (const d of [...deployments(), find("Job", "media-migrate")]) {
      for (const c of containersOf(d)) {
        for (const name of envNames(c)) expect({ name, inConfig: new RegExp(`\\b${name}\\b`).test(configSource) }).toEqual({ name, inConfig: true });
        for (const e of c.env ?? []) {
          if (CREDENTIALS.includes(e.name)) expect({ name: e.name, value: e.value, secret: e.valueFrom?.secretKeyRef?.name }).toEqual({ name: e.name, value: undefined, secret: "media" });
          if (e.valueFrom?.secretKeyRef) env[e.name] = e.name === "INITIAL_ADMIN_KEY" ? "a".repeat(64) : e.name.endsWith("_URL") ? "postgres://u:p@db/media".replace("postgres", e.name === "REDIS_URL" ? "redis" : "postgres") : "x".repeat(32);
        }
      }
    }
    // What a pod would start with (a secret's values made up): the configuration loads.
    const config = loadConfig(env);
    expect([config.host, config.ops.metricsPort, config.worker.inline]).toEqual(["0.0.0.0", 9464, false]);
  });

  test("probes: startup and liveness on /healthz, readiness on /readyz, on the METRICS_PORT listener; requests; a grace period above the drain", () => {
    const shutdownS = loadConfig({}).ops.shutdownTimeoutMs / 1000;
    for (const d of deployments()) {
      const pod = d.spec.template.spec;
      for (const c of containersOf(d)) {
        const ops = c.ports!.find((p) => p.containerPort === Number(configMap().METRICS_PORT));
        expect(ops).toBeDefined();
        expect(envNames(c)).toContain("METRICS_PORT");
        expect([c.startupProbe?.httpGet, c.readinessProbe?.httpGet, c.livenessProbe?.httpGet]).toEqual([
          { path: "/healthz", port: ops!.name },
          { path: "/readyz", port: ops!.name },
          { path: "/healthz", port: ops!.name },
        ]);
        // The readiness check's own deadline fits in the probe's.
        expect(c.readinessProbe.timeoutSeconds * 1000).toBeGreaterThan(loadConfig({}).ops.readyTimeoutMs);
        expect(Object.keys(c.resources?.requests ?? {}).sort()).toEqual(["cpu", "memory"]);
        const preStop = Number(c.lifecycle?.preStop?.exec?.command?.[1] ?? 0);
        expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStop + shutdownS);
      }
    }
  });

  test("the migration Job runs what `npm run db:migrate` runs, the worker what `npm run worker` runs, the API what `npm start` runs", () => {
    const scripts = JSON.parse(read("package.json")).scripts as Record<string, string>;
    const file = (script: string) => script.split(/\s+/).find((w) => w.endsWith(".ts"));
    const commandFile = (d: Doc) => containersOf(d)[0]!.command?.find((w) => w.endsWith(".ts"));
    expect(commandFile(find("Job", "media-migrate"))).toBe(file(scripts["db:migrate"]!));
    expect(commandFile(find("Deployment", "media-worker"))).toBe(file(scripts.worker!));
    // The API takes the image's CMD: the same file as npm start.
    expect(containersOf(find("Deployment", "media-api"))[0]!.command).toBeUndefined();
    expect(read("packaging/Containerfile")).toContain(`"${file(scripts.start!)}"]`);
  });
});

describe("the probes and the image's healthcheck against a server started as a pod starts it", () => {
  let child: Child;
  let dataDir: string;
  const ports = { http: 0, ops: 0 };

  beforeAll(async () => {
    [ports.http, ports.ops] = [await freePort(), await freePort()];
    dataDir = mkdtempSync(join(tmpdir(), "media-packaging-"));
    await seedDataDir(dataDir);
    // The ConfigMap's settings, on the embedded backends and loopback (no cluster here).
    const { S3_ENDPOINT, S3_PUBLIC_ENDPOINT, WORKER_INLINE, HOST, ...settings } = configMap();
    child = spawnScript("app/main.ts", { ...settings, HOST: "127.0.0.1", PORT: String(ports.http), METRICS_PORT: String(ports.ops), STORAGE_PORT: String(await freePort()), DATA_DIR: dataDir });
    await untilServing(child, `http://127.0.0.1:${ports.ops}/healthz`);
  }, 200_000);

  afterAll(async () => {
    child?.proc.kill("SIGTERM");
    await child?.finished();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("every probe of every Deployment answers 200 on the port it names", async () => {
    for (const d of deployments()) {
      for (const c of containersOf(d)) {
        for (const probe of [c.startupProbe, c.readinessProbe, c.livenessProbe]) {
          const port = c.ports!.find((p) => p.name === probe.httpGet.port)!.containerPort === Number(configMap().METRICS_PORT) ? ports.ops : ports.http;
          const res = await fetch(`http://127.0.0.1:${port}${probe.httpGet.path}`);
          expect({ deployment: d.metadata.name, path: probe.httpGet.path, status: res.status }).toEqual({ deployment: d.metadata.name, path: probe.httpGet.path, status: 200 });
        }
      }
    }
  });

  const healthcheck = async (env: Record<string, string>, ...args: string[]) => {
    const proc = Bun.spawn([process.execPath, join(root, "packaging/healthcheck.ts"), ...args], { env: { PATH: process.env.PATH ?? "", ...env }, stdout: "ignore", stderr: "ignore" });
    return proc.exited;
  };

  test("packaging/healthcheck.ts: 0 for a live /healthz on METRICS_PORT or PORT, 1 for a closed port or a non-2xx answer; --any-answer takes any status", async () => {
    const closed = await freePort();
    expect(await healthcheck({ METRICS_PORT: String(ports.ops), PORT: String(closed) })).toBe(0);
    expect(await healthcheck({ PORT: String(ports.http) })).toBe(0);
    expect(await healthcheck({ PORT: String(closed) })).toBe(1);
    expect(await healthcheck({}, `http://127.0.0.1:${ports.http}/no-such-path`)).toBe(1);
    expect(await healthcheck({}, "--any-answer", `http://127.0.0.1:${ports.http}/no-such-path`)).toBe(0);
    expect(await healthcheck({}, "--any-answer", `http://127.0.0.1:${closed}/`)).toBe(1);
  });
});

describe("compose (packaging/compose.yaml)", () => {
  const text = read("packaging/compose.yaml");
  const compose = Bun.YAML.parse(text) as { services: Record<string, { healthcheck?: { test: string[] }; depends_on?: Record<string, { condition: string }> | string[] }> };

  test("every service has a healthcheck, and each dependency is waited for until it is healthy", () => {
    for (const [name, service] of Object.entries(compose.services)) {
      expect({ name, healthcheck: Array.isArray(service.healthcheck?.test) }).toEqual({ name, healthcheck: true });
      if (service.depends_on === undefined) continue;
      expect(Array.isArray(service.depends_on)).toBe(false);
      for (const [dependency, how] of Object.entries(service.depends_on)) {
        expect(Object.keys(compose.services)).toContain(dependency);
        expect({ name, dependency, condition: (how as { condition: string }).condition }).toEqual({ name, dependency, condition: "service_healthy" });
      }
    }
    expect(Object.keys(compose.services.media!.depends_on!).sort()).toEqual(["postgres", "redis", "storage"]);
    expect(Object.keys(compose.services.worker!.depends_on!).sort()).toEqual(["postgres", "redis", "storage"]);
  });

  test("no default secrets: each credential is required, and the file names no made-up one", () => {
    expect(text).not.toMatch(/change-me/i);
    for (const name of ["POSTGRES_PASSWORD", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "INITIAL_ADMIN_KEY"]) {
      const uses = [...text.matchAll(new RegExp(`\\$\\{${name}([^}]*)\\}`, "g"))].map((m) => m[1]!);
      expect(uses.length).toBeGreaterThan(0);
      for (const rest of uses) expect({ name, required: rest.startsWith(":?") }).toEqual({ name, required: true });
    }
  });
});

describe("the image (packaging/Containerfile)", () => {
  const containerfile = read("packaging/Containerfile");

  const code = (text: string) => text.split("\n").filter((l) => !l.trimStart().startsWith("#")).join("\n");

  test("installs no ffmpeg or poppler: no code of the service runs them", () => {
    expect(code(containerfile)).not.toMatch(/ffmpeg|poppler|apt-get/i);
    expect(code(read("packaging/build-image.sh"))).not.toMatch(/ffmpeg|poppler|MEDIA_TOOLS/i);
    const sources = new Bun.Glob("{app,worker,domain,storage,http,rest,mcp,db,search,net,payments,telemetry,openapi}/**/*.ts");
    for (const file of sources.scanSync({ cwd: root })) {
      expect({ file, spawns: /spawn[^\n]*["'`](?:ffmpeg|ffprobe|pdftoppm|pdfinfo)["'`]/.test(read(file)) }).toEqual({ file, spawns: false });
    }
  });

  test("the build drops TypeScript from the production install: no code of the service loads it", () => {
    expect(code(read("packaging/build-image.sh"))).toContain('rm -rf "$ctx/app/node_modules/typescript" "$ctx/app/node_modules/@typescript"');
    const sources = new Bun.Glob("{app,worker,domain,storage,http,rest,mcp,db,search,net,payments,telemetry,openapi,contract,console}/**/*.{ts,tsx}");
    for (const file of sources.scanSync({ cwd: root })) {
      expect({ file, loads: /(?:^|\n)\s*import\s+(?!type\b)[^;]*from\s+["']typescript["']|(?:require|import)\(\s*["']typescript["']/.test(read(file)) }).toEqual({ file, loads: false });
    }
  });

  test("a HEALTHCHECK that runs packaging/healthcheck.ts with the image's Bun, kept by building in Docker's format", () => {
    expect(containerfile).toMatch(/^HEALTHCHECK .*CMD \["\/app\/node_modules\/bun\/bin\/bun\.exe", "packaging\/healthcheck\.ts"\]$/m);
    expect(code(read("packaging/build-image.sh"))).toContain("build --format docker");
  });

  test("of @scalar, the image keeps what the docs page loads: the package resolves and its standalone bundle is beside the entry point", async () => {
    const dest = mkdtempSync(join(tmpdir(), "media-docs-bundle-"));
    try {
      const installed = join(root, "node_modules/@scalar/api-reference");
      const kept = join(dest, "node_modules/@scalar/api-reference");
      const proc = Bun.spawn(["sh", join(root, "packaging/keep-docs-bundle.sh"), installed, kept], { stderr: "pipe" });
      expect(await proc.exited).toBe(0);
      // openapi/docs-page.ts finds the bundle this way.
      expect(read("openapi/docs-page.ts")).toContain('join(dirname(Bun.resolveSync("@scalar/api-reference", import.meta.dir)), "browser", "standalone.js")');
      const bundle = join(dirname(Bun.resolveSync("@scalar/api-reference", dest)), "browser", "standalone.js");
      expect(bundle.startsWith(kept)).toBe(true);
      expect(Bun.file(bundle).size).toBe(Bun.file(join(installed, "dist/browser/standalone.js")).size);
      const files = [...new Bun.Glob("**/*").scanSync({ cwd: kept })];
      expect(files.length).toBe(3);
    } finally {
      rmSync(dest, { recursive: true, force: true });
    }
  });
});
