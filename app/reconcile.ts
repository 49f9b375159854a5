import { parseArgs } from "node:util";
import { DEFAULT_OLDER_THAN_MS, reconcileOrganization, reconcileOrganizations, reconcileUnattributed } from "../domain/reconcile/reconcile.ts";
import { loadConfig } from "./config.ts";
import { createServices } from "./services.ts";

/**
 * `npm run reconcile [-- --fix] [--org <id>] [--older-than <hours>] [--list]`: compares storage with the
 * catalogue for every organization (or one) and prints one JSON line per organization, then
 * one for storage that belongs to no bucket, then a summary line. With --fix it repairs what
 * is safe and the lines say what was done. Runs beside the servers (same environment); with the
 * embedded database stop the server first, or use the `reconcile_run` tool (`media reconcile run`).
 * Exit status: 0 when everything agreed (or was repaired), 1 when something is left to look at.
 */
const { values } = parseArgs({
  options: {
    fix: { type: "boolean", default: false },
    org: { type: "string" },
    list: { type: "boolean", default: false },
    "older-than": { type: "string", default: String(DEFAULT_OLDER_THAN_MS / 3_600_000) },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write("usage: npm run reconcile -- [--fix] [--org <organization id>] [--older-than <hours, default 24>] [--list]\n");
  process.exit(0);
}
const hours = Number(values["older-than"]);
if (!Number.isFinite(hours) || hours < 0) {
  process.stderr.write("--older-than must be a number of hours, 0 or more\n");
  process.exit(2);
}
const out = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);
// --list: every finding on its own line as it is made (reports keep only the first 20 of each kind).
const opts = { fix: values.fix, olderThanMs: hours * 3_600_000, ...(values.list ? { onFinding: (finding: unknown) => out({ finding }) } : {}) };
const services = await createServices(loadConfig(), { role: "task" });
const { deps } = services;

let organizations = 0;
let problems = 0;
try {
  const reports = values.org ? [await reconcileOrganization(deps, values.org, opts)] : reconcileOrganizations(deps, opts);
  for await (const report of reports) {
    organizations++;
    out({ organization: report });
    const left =
      report.rowsWithoutBytes.count +
      (report.bytesWithoutRow.count + report.derivativesWithoutSource.count - report.fixed.deletedObjects) +
      (report.usage.consistent || report.fixed.usageRepaired ? 0 : 1) +
      (report.staleLabels.count - report.fixed.relabeledObjects);
    problems += left;
  }
  if (!values.org) {
    const unattributed = await reconcileUnattributed(deps, opts);
    out({ unattributed });
    problems += unattributed.bytesWithoutBucket.count + unattributed.derivativesWithoutBucket.count - unattributed.fixed.deletedObjects;
  }
  out({ summary: { organizations, fix: opts.fix, leftToLookAt: problems } });
} finally {
  await services.close();
}
process.exit(problems > 0 ? 1 : 0);
