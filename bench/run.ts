/** `npm run bench -- <scenario>`: runs bench/<scenario>.ts, after installing the tools it drives. */
import { readdirSync } from "node:fs";
import { imageMagickConvert } from "./_imagemagick.ts";

const scenario = process.argv[2];
const available = readdirSync(import.meta.dir).filter((f) => f.endsWith(".ts") && f !== "run.ts" && !f.startsWith("_")).map((f) => f.slice(0, -3));
if (!scenario || !available.includes(scenario)) {
  console.error(`usage: npm run bench -- <${available.join("|")}>`);
  process.exit(2);
}

// The load generators and the baselines some scenarios compare against come from Debian's
// packages (command -> package), so a clean checkout runs any scenario with this one command.
const debianTools: Record<string, Record<string, string>> = {
  presign: { wrk: "wrk" },
  get: { wrk: "wrk" },
  peer: { wrk: "wrk", git: "git" },
  guards: { wrk: "wrk" },
  upload: { rclone: "rclone" },
  thumbs: { convert: "imagemagick", ffmpeg: "ffmpeg", ffprobe: "ffmpeg" },
  stages: { ffmpeg: "ffmpeg" },
  "cli-start": { hyperfine: "hyperfine" },
  // The command-line tools are the baseline the worker's npm path is measured against.
  media: { ffmpeg: "ffmpeg", ffprobe: "ffmpeg", pdftoppm: "poppler-utils", pdfinfo: "poppler-utils" },
};
const present = (cmd: string) => (cmd === "convert" ? imageMagickConvert() !== null : Bun.which(cmd) !== null);
const missing = [...new Set(Object.entries(debianTools[scenario] ?? {}).filter(([cmd]) => !present(cmd)).map(([, pkg]) => pkg))];
if (missing.length > 0) {
  console.error(`[bench] installing ${missing.join(", ")} from Debian's packages`);
  const apt = (args: string[]) => Bun.spawnSync(["apt-get", ...args], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }, stdout: "ignore", stderr: "inherit" }).exitCode === 0;
  const install = ["install", "-y", "--no-install-recommends", ...missing];
  if (!apt(install) && !(apt(["update"]) && apt(install))) {
    console.error(`[bench] could not install ${missing.join(", ")}; install them (apt-get install ${missing.join(" ")}) and run again`);
    process.exit(2);
  }
}

const proc = Bun.spawn([process.execPath, `${import.meta.dir}/${scenario}.ts`, ...process.argv.slice(3)], { stdout: "inherit", stderr: "inherit" });
process.exit(await proc.exited);
