import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { DataDirLocked, LOCK_FILE } from "../../storage/local-s3/dir-lock.ts";
import { startLocalS3 } from "../../storage/local-s3/index.ts";
import { CREDS, makeClient } from "./local-s3-helpers.ts";
import { type Child, freePort, spawnScript, untilServing } from "../support/processes.ts";
import { JWT_SECRET } from "../support/env.ts";
import { seedDataDir } from "../support/server.ts";

// One pass: the lock is on the data directory of the embedded storage node and database, whatever the run's backends.

/**
 * One process per data directory. A second storage node (on its own, in-process, or the one
 * inside `npm start`) on a directory in use stops with one line naming the directory and the
 * process holding it, and touches none of the first's files: its start-up cleanup would
 * delete the first's in-flight writes. A lock left by a process that is gone is taken over.
 */
const dirs: string[] = [];
const children: Child[] = [];
afterAll(() => {
  for (const c of children) c.proc.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "media-dir-lock-"));
  dirs.push(d);
  return d;
}

/** A file as the first node's in-flight write leaves it in tmp/, which a node's start-up wipes. */
function plantInFlight(objectsDir: string): string {
  mkdirSync(join(objectsDir, "tmp"), { recursive: true });
  const file = join(objectsDir, "tmp", "in-flight-write");
  writeFileSync(file, "half an upload");
  return file;
}

async function putAndGet(url: string, key: string) {
  const client = makeClient(url);
  try {
    await client.send(new PutObjectCommand({ Bucket: "locked", Key: key, Body: "kept" })).catch(async (err) => {
      if ((err as { name?: string }).name !== "NoSuchBucket") throw err;
      const { CreateBucketCommand } = await import("@aws-sdk/client-s3");
      await client.send(new CreateBucketCommand({ Bucket: "locked" }));
      await client.send(new PutObjectCommand({ Bucket: "locked", Key: key, Body: "kept" }));
    });
    return await (await client.send(new GetObjectCommand({ Bucket: "locked", Key: key }))).Body!.transformToString();
  } finally {
    client.destroy();
  }
}

async function get(url: string, key: string) {
  const client = makeClient(url);
  try {
    return await (await client.send(new GetObjectCommand({ Bucket: "locked", Key: key }))).Body!.transformToString();
  } finally {
    client.destroy();
  }
}

test("in one process: a second node on a directory in use is refused and the first keeps its files", async () => {
  const dir = join(tempDir(), "objects");
  const first = await startLocalS3({ dir, credentials: [CREDS] });
  try {
    expect(await putAndGet(first.url, "a")).toBe("kept");
    const inFlight = plantInFlight(dir);
    const refused = await startLocalS3({ dir, credentials: [CREDS] }).then(
      (n) => n.stop().then(() => null),
      (e) => e,
    );
    expect(refused).toBeInstanceOf(DataDirLocked);
    expect((refused as DataDirLocked).pid).toBe(process.pid);
    expect(existsSync(inFlight)).toBe(true);
    expect(await get(first.url, "a")).toBe("kept");
  } finally {
    await first.stop();
  }
  // Stopped, it lets the directory go: the next node opens it and finds the object.
  expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  const again = await startLocalS3({ dir, credentials: [CREDS] });
  try {
    expect(await get(again.url, "a")).toBe("kept");
  } finally {
    await again.stop();
  }
});

function startNode(dataDir: string, port: number): Child {
  const child = spawnScript("storage/local-s3/main.ts", { DATA_DIR: dataDir, STORAGE_PORT: String(port), S3_ACCESS_KEY_ID: CREDS.accessKeyId, S3_SECRET_ACCESS_KEY: CREDS.secretAccessKey });
  children.push(child);
  return child;
}

async function nodeStarted(child: Child): Promise<void> {
  for (let i = 0; i < 600 && !child.errors().includes("storage node started"); i++) {
    if (child.proc.exitCode !== null) throw new Error(`the storage node exited first:\n${child.errors()}`);
    await Bun.sleep(100);
  }
  expect(child.errors()).toContain("storage node started");
}

test("storage/local-s3/main.ts: a second node on the same DATA_DIR exits 1 naming the directory and the holder's pid", async () => {
  const dataDir = tempDir();
  const port = await freePort();
  const first = startNode(dataDir, port);
  await nodeStarted(first);
  const url = `http://127.0.0.1:${port}`;
  expect(await putAndGet(url, "b")).toBe("kept");
  const inFlight = plantInFlight(join(dataDir, "objects"));

  const second = startNode(dataDir, await freePort());
  expect(await second.finished()).toBe(1);
  const lines = second.errors().trim().split("\n");
  expect(lines).toEqual([
    `Cannot start: the data directory ${join(dataDir, "objects")} is in use by process ${first.proc.pid} (one process per data directory). Stop that process, or set DATA_DIR to another directory.`,
  ]);
  expect(existsSync(inFlight)).toBe(true);
  expect(await get(url, "b")).toBe("kept");

  // Killed, the first leaves its lock behind; the process named in it is gone, so the next start takes it over.
  first.proc.kill("SIGKILL");
  await first.finished();
  expect(JSON.parse(readFileSync(join(dataDir, "objects", LOCK_FILE), "utf8")).pid).toBe(first.proc.pid);
  const third = startNode(dataDir, port);
  await nodeStarted(third);
  expect(await get(url, "b")).toBe("kept");
  third.proc.kill("SIGTERM");
  expect(await third.finished()).toBe(0);
  expect(existsSync(join(dataDir, "objects", LOCK_FILE))).toBe(false);
});

test("npm start: a second server on the same DATA_DIR exits 1 naming the directory and the holder's pid, and the first keeps serving", async () => {
  const dataDir = tempDir();
  await seedDataDir(dataDir);
  const env = (port: number, storagePort: number) => ({ DATA_DIR: dataDir, PORT: String(port), STORAGE_PORT: String(storagePort), JWT_SECRET, INITIAL_ADMIN_KEY: "c".repeat(64) });
  const port = await freePort();
  const first = spawnScript("app/main.ts", env(port, await freePort()));
  children.push(first);
  await untilServing(first, `http://127.0.0.1:${port}/healthz`, { what: "the first server" });
  const inFlight = plantInFlight(join(dataDir, "objects"));

  const second = spawnScript("app/main.ts", env(await freePort(), await freePort()));
  children.push(second);
  expect(await second.finished()).toBe(1);
  expect(second.errors().trim().split("\n")).toEqual([
    `Cannot start: the data directory ${dataDir} is in use by process ${first.proc.pid} (one process per data directory). Stop that process, or set DATA_DIR to another directory.`,
  ]);
  expect(existsSync(inFlight)).toBe(true);
  const me = await fetch(`http://127.0.0.1:${port}/api/me`, { headers: { authorization: `Bearer ${"c".repeat(64)}` } });
  expect(me.status).toBe(200);
  first.proc.kill("SIGTERM");
  expect(await first.finished()).toBe(0);
});
