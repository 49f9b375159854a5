import { describe, expect, test } from "bun:test";
import { testEnv } from "../support/env.ts";
import { cephInstalled } from "./ceph-cluster.ts";
import { compatReport, reportTable } from "./run.ts";

/**
 * The storage adapter and the service on a real S3 implementation, Ceph's RADOS Gateway, beside
 * the embedded node (test/compat/run.ts, also `npm run compat`). About 30 s, mostly the
 * cluster's start, so it runs in the PostgreSQL pass only (what it tests does not depend on the
 * database), and only where Debian's ceph packages are installed (.ci/run installs them).
 */
const runs = cephInstalled() && testEnv.mode === "services";

describe.skipIf(!runs)("S3 compatibility with Ceph's RADOS Gateway", () => {
  test("every check passes on both stores, and the service works on the gateway", async () => {
    const report = await compatReport();
    const failed = [...report.embedded.map((r) => ({ ...r, store: "embedded" })), ...report.real.map((r) => ({ ...r, store: "ceph" })), ...report.service.map((r) => ({ ...r, store: "service on ceph" }))]
      .filter((r) => !r.ok)
      .map((r) => `${r.store}: ${r.name}: ${r.observed}`);
    if (failed.length > 0) console.log(reportTable(report));
    expect(failed).toEqual([]);
  }, 360_000);
});

if (!cephInstalled()) console.log("S3 compatibility with Ceph not run: radosgw, ceph-mon and ceph-osd are not installed");
