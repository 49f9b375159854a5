import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { findTool } from "../tools/registry.ts";
import { ApiError } from "./client.ts";
import { isClosedPipe } from "./closed-pipe.ts";
import { type Command, EXIT } from "./context.ts";
import { UsageError } from "./flags.ts";
import { humanBytes, renderJson } from "./output.ts";
import { progressBar, silentProgress } from "./progress.ts";
import { getBytes, StorageError } from "./transfer.ts";

export const downloadCommand: Command = {
  path: ["download"],
  section: "transfer",
  title: "Download a media object",
  description:
    "Downloads an object's bytes straight from storage through a presigned URL (presign_download), streaming them to disk with a progress bar. " +
    "The file is written as <file>.part and renamed when complete, so an interrupted download never looks finished.",
  positionals: [{ name: "id", required: true, description: "Media object id (UUID)" }],
  flags: [
    { name: "output", type: "string", short: "o", placeholder: "file", description: "Where to write: a file, a directory, or - for stdout (default: the object's file name here)" },
    { name: "force", type: "boolean", short: "f", description: "Overwrite an existing file" },
    { name: "progress", type: "boolean", description: "Show a progress bar (default: when stderr is a terminal)" },
  ],
  notes: "Examples:\n  media download 0b7e...c1 -o beach.jpg\n  media download 0b7e...c1 -o - | ffprobe -",
  async run(ctx, args) {
    const [id] = args.positionals;
    if (!id || args.positionals.length > 1) throw new UsageError("give one media object id", "download");
    const v = args.values as { output?: string; force?: boolean; progress?: boolean };
    const toStdout = v.output === "-";
    if (toStdout && ctx.globals.json) throw new UsageError("-o - writes the bytes to stdout: it cannot be combined with --json", "download");
    const client = ctx.client();
    const signed = await client.call<{ url: string; key: string }>(findTool("presign_download")!, { objectId: id });
    const name = signed.key.slice(signed.key.lastIndexOf("/") + 1) || id;
    let target = resolve(v.output ?? name);
    if (!toStdout && existsSync(target) && statSync(target).isDirectory()) target = join(target, name);
    if (!toStdout && existsSync(target) && !v.force) throw new UsageError(`${target} exists: use --force to overwrite, or -o to choose another file`, "download");

    const response = await getBytes(signed.url);
    const expected = Number(response.headers.get("content-length") ?? Number.NaN);
    const showBar = v.progress ?? (ctx.stderrIsTTY && !ctx.globals.quiet && !ctx.globals.json && !(toStdout && ctx.stdoutIsTTY));
    const progress = showBar
      ? progressBar({ total: Number.isFinite(expected) ? expected : 0, files: 1, write: ctx.err, columns: () => process.stderr.columns ?? 80, verb: "Downloaded" })
      : silentProgress();
    progress.label(signed.key);

    const partial = `${target}.part`;
    const sink = toStdout ? Bun.stdout.writer() : Bun.file(partial).writer({ highWaterMark: 1024 * 1024 });
    let written = 0;
    try {
      for await (const chunk of response.body) {
        sink.write(chunk);
        written += chunk.byteLength;
        progress.add(chunk.byteLength);
        if (!toStdout && written % (8 * 1024 * 1024) < chunk.byteLength) await sink.flush();
      }
      await sink.flush();
      if (!toStdout) await sink.end();
    } catch (err) {
      if (toStdout && isClosedPipe(err)) {
        // The reader has what it wanted (`| head -c 8`): stop fetching, and succeed.
        await response.body.cancel().catch(() => {});
        return EXIT.ok;
      }
      if (!toStdout) rmSync(partial, { force: true });
      throw new StorageError(0, "network_error", `download interrupted after ${humanBytes(written)}: ${(err as Error).message}`);
    }
    if (Number.isFinite(expected) && written !== expected) {
      if (!toStdout) rmSync(partial, { force: true });
      throw new ApiError(0, "size_mismatch", `received ${written} bytes, storage announced ${expected}`);
    }
    if (!toStdout) renameSync(partial, target);
    progress.finish();
    const result = { id, key: signed.key, file: toStdout ? "-" : target, size: written };
    if (ctx.globals.json) ctx.out(renderJson(result));
    else if (!toStdout) ctx.out(`${target}  ${humanBytes(written)}\n`);
    return EXIT.ok;
  },
};
