/** `npm run bench -- <scenario>`: runs bench/<scenario>.ts. */
import { readdirSync } from "node:fs";

const scenario = process.argv[2];
const available = readdirSync(import.meta.dir).filter((f) => f.endsWith(".ts") && f !== "run.ts" && !f.startsWith("_")).map((f) => f.slice(0, -3));
if (!scenario || !available.includes(scenario)) {
  console.error(`usage: npm run bench -- <${available.join("|")}>`);
  process.exit(2);
}
const proc = Bun.spawn([process.execPath, `${import.meta.dir}/${scenario}.ts`, ...process.argv.slice(3)], { stdout: "inherit", stderr: "inherit" });
process.exit(await proc.exited);
