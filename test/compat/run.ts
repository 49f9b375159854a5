/**
 * `npm run compat`: the storage adapter's checks (test/compat/s3-checks.ts) against the
 * embedded storage node and against Ceph's RADOS Gateway, side by side, then the service's own
 * flow on the gateway. The gateway is a one-node cluster started for the run (Debian's
 * `ceph-mon`, `ceph-osd`, `radosgw`), or any S3 endpoint named by COMPAT_S3_ENDPOINT,
 * COMPAT_S3_ACCESS_KEY_ID and COMPAT_S3_SECRET_ACCESS_KEY. Prints a Markdown table; exits 1 when
 * a check fails on either store.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalS3 } from "../../storage/local-s3/index.ts";
import { S3Storage } from "../../storage/s3.ts";
import { type CephCluster, cephInstalled, startCeph } from "./ceph-cluster.ts";
import { type CheckResult, runChecks } from "./s3-checks.ts";
import { serviceFlow } from "./service-flow.ts";

export interface CompatReport {
  store: string;
  startSeconds: number;
  embedded: CheckResult[];
  real: CheckResult[];
  service: CheckResult[];
}

/** `embedded`: the adapter as the service opens it for the embedded node (it signs a PUT's maximum). */
function storageAt(endpoint: string, credentials: { accessKeyId: string; secretAccessKey: string }, bucket: string, embedded = false): S3Storage {
  return new S3Storage({ endpoint, publicEndpoint: null, region: "us-east-1", bucket, forcePathStyle: true, enforcesMaxLength: embedded, ...credentials });
}

export async function compatReport(): Promise<CompatReport> {
  const dir = mkdtempSync(join(tmpdir(), "media-compat-"));
  let ceph: CephCluster | null = null;
  const node = await startLocalS3({ dir: join(dir, "embedded"), credentials: [{ accessKeyId: "compat", secretAccessKey: "compat-secret" }] });
  try {
    const embeddedStorage = storageAt(node.url, { accessKeyId: "compat", secretAccessKey: "compat-secret" }, "compat", true);
    await embeddedStorage.ensureBucket();
    const embedded = await runChecks(embeddedStorage);

    const started = performance.now();
    let store: { endpoint: string; accessKeyId: string; secretAccessKey: string; name: string };
    if (process.env.COMPAT_S3_ENDPOINT) {
      store = { endpoint: process.env.COMPAT_S3_ENDPOINT, accessKeyId: process.env.COMPAT_S3_ACCESS_KEY_ID ?? "", secretAccessKey: process.env.COMPAT_S3_SECRET_ACCESS_KEY ?? "", name: process.env.COMPAT_S3_ENDPOINT };
    } else {
      if (!cephInstalled()) throw new Error("Ceph is not installed: apt-get install radosgw ceph-mon ceph-osd (or set COMPAT_S3_ENDPOINT)");
      ceph = await startCeph(join(dir, "ceph"));
      const version = (await new Response(Bun.spawn(["radosgw", "--version"], { stdout: "pipe" }).stdout).text()).trim();
      store = { ...ceph, name: `Ceph RADOS Gateway (${version.replace(/ \([0-9a-f]+\)/, "")})` };
    }
    const startSeconds = (performance.now() - started) / 1000;
    const realStorage = storageAt(store.endpoint, store, "compat");
    await realStorage.ensureBucket();
    const real = await runChecks(realStorage);
    const service = await serviceFlow(store);
    return { store: store.name, startSeconds, embedded, real, service };
  } finally {
    await ceph?.stop();
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function reportTable(report: CompatReport): string {
  const mark = (r: CheckResult | undefined) => (r ? (r.ok ? "pass" : "FAIL") : "-");
  const lines = [
    `Store: ${report.store} (up in ${report.startSeconds.toFixed(1)} s)`,
    "",
    "| check | embedded node | real store | observed on the real store |",
    "|---|---|---|---|",
    ...report.real.map((r, i) => `| ${r.name} | ${mark(report.embedded[i])} | ${mark(r)} | ${r.observed.replace(/\|/g, "\\|")} |`),
    ...report.service.map((r) => `| ${r.name} | | ${mark(r)} | ${r.observed.replace(/\|/g, "\\|")} |`),
    "",
    "Observed on the embedded node where it differs:",
    ...report.embedded.filter((r, i) => r.observed !== report.real[i]?.observed).map((r) => `- ${r.name}: ${r.observed}`),
  ];
  return lines.join("\n");
}

if (import.meta.main) {
  const report = await compatReport();
  console.log(reportTable(report));
  const failed = [...report.embedded, ...report.real, ...report.service].filter((r) => !r.ok);
  process.exit(failed.length > 0 ? 1 : 0);
}
