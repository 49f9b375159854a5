import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { ocrImage, stopOcr } from "../../worker/derivatives/ocr.ts";
import { MediaError } from "../../worker/derivatives/errors.ts";
import { textImage } from "../support/text-files.ts";

/**
 * OCR reads its model from the installed npm package, never from the network: the probe runs
 * in a new network namespace (`unshare -n`: no interface but a downed loopback, no DNS), with
 * proxy variables pointing nowhere for good measure. tesseract.js falls back to a CDN when a
 * model is not found on disk, so a wrong langPath fails here.
 */
const canUnshare = spawnSync("unshare", ["-n", "true"]).status === 0;

describe("OCR without a network", () => {
  test.skipIf(!canUnshare)("reads an image's words with the network unreachable", () => {
    const bun = process.execPath;
    const run = spawnSync("unshare", ["-n", bun, "test/support/ocr-offline-probe.ts"], {
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, HTTPS_PROXY: "http://127.0.0.1:9", HTTP_PROXY: "http://127.0.0.1:9", https_proxy: "http://127.0.0.1:9", http_proxy: "http://127.0.0.1:9" },
    });
    expect(run.stderr).not.toContain("error");
    expect(run.status).toBe(0);
    const { text } = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
    expect(text).toContain("Offline heron 2026");
  }, 90_000);

  test.skipIf(!canUnshare)("the probe would fail if the model came from the network", () => {
    // The same call with tesseract.js's default (the CDN) instead of the package cannot load.
    const run = spawnSync(
      "unshare",
      ["-n", process.execPath, "-e", `const { createWorker } = await import("tesseract.js"); try { await createWorker("eng", 1, { cacheMethod: "none", errorHandler: () => {} }); console.log("loaded"); } catch { console.log("failed"); } process.exit(0);`],
      { encoding: "utf8", timeout: 15_000 },
    );
    // It fails, or hangs until killed: either way it never loads.
    expect(run.stdout).not.toContain("loaded");
  }, 90_000);
});

describe("OCR's deadline", () => {
  test("a recognition past its deadline is stopped, and the next image gets a new thread", async () => {
    const image = await textImage(["Deadline egret"]);
    try {
      expect(await ocrImage(image, ["eng"], 1).catch((err) => err)).toBeInstanceOf(MediaError);
      expect(await ocrImage(image, ["eng"])).toContain("Deadline egret");
    } finally {
      await stopOcr();
    }
  }, 90_000);
});
