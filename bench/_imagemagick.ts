import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

/**
 * ImageMagick's `convert`, found on PATH by what it says it is: a machine may carry a stand-in
 * named `convert` ahead of the real one (this one has /usr/local/bin/convert, which only turns a
 * PNG into PPM), so the first `convert` on PATH is not necessarily ImageMagick.
 */
export function imageMagickConvert(): string | null {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "convert");
    if (!existsSync(candidate)) continue;
    const out = Bun.spawnSync([candidate, "-version"], { stdout: "pipe", stderr: "ignore" });
    if (out.stdout.toString().includes("ImageMagick")) return candidate;
  }
  return null;
}
