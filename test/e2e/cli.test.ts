import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commandPath } from "../../cli/commands.ts";
import { registry } from "../../tools/registry.ts";
import { CLI, type CliRun, cliEnv, cliJsonHere, removeTempConfigHomes, runCli, runCliHere, tempConfigHome } from "../support/cli.ts";
import { withServerAndOrg } from "../support/fixtures.ts";
import type { TestOrg, TestServer } from "../support/server.ts";

// One pass: the CLI speaks REST; the backends behind it are the integration tests' business.
// Commands run through the CLI's entry function in this process (runCliHere); what a process
// adds (stdin, its exit status, a closed pipe, the compiled binary) is tested through real
// processes (runCli), one start each, ~0.5-1 s on a loaded machine.
setDefaultTimeout(90_000);

let server: TestServer;
let org: TestOrg;
let base: { url: string; key: string };

withServerAndOrg({
  ready: (made) => {
    ({ server, org } = made);
    base = { url: server.url, key: org.adminKey.secret };
  },
  cleanup: removeTempConfigHomes,
});

describe("commands derived from the registry", () => {
  test("the top-level help lists every registry tool as a command; each command's help shows its tool", async () => {
    const root = await runCliHere(["--help"]);
    expect(root.code).toBe(0);
    for (const tool of registry) {
      expect(root.stdout).toContain(commandPath(tool).join(" "));
      expect(root.stdout).toContain(`(${tool.name})`);
    }
    // Each command's help through the CLI's own entry function, in this process: a process per
    // tool spends most of its time loading the registry (about 0.4 s each, 80 s for every tool on a
    // loaded machine). One command's help still goes through a real process, below.
    const helps: CliRun[] = [];
    for (const tool of registry) helps.push(await runCliHere([...commandPath(tool), "--help"]));
    registry.forEach((tool, i) => {
      const h = helps[i]!;
      expect({ tool: tool.name, code: h.code, stderr: h.stderr }).toEqual({ tool: tool.name, code: 0, stderr: "" });
      expect(h.stdout).toContain(tool.title);
      expect(h.stdout).toContain(`Tool: ${tool.name}`);
      expect(h.stdout.replace(/\s+/g, " ")).toContain(tool.description.split(" ").slice(0, 6).join(" "));
    });
    const spawned = await runCli(["api-keys", "create", "--help"]);
    expect(spawned.code).toBe(0);
    const create = helps[registry.findIndex((t) => t.name === "api_keys_create")]!.stdout;
    // The same text, give or take where lines wrap (help wraps to this process's terminal, if any).
    const words = (text: string) => text.replace(/\s+/g, " ").trim();
    expect(words(spawned.stdout)).toBe(words(create));
    expect(create).toContain("--name <string>");
    expect(create).toContain("--scopes <read|write|delete|admin,...>");
    expect(create).toContain("--expires-in-days <integer>");
    const group = await runCliHere(["buckets"]);
    expect(group.code).toBe(0);
    for (const t of registry.filter((t) => t.name.startsWith("buckets_"))) expect(group.stdout).toContain(t.name);
  });

  test("create, list and get: --json output parses; human output is a table or key/value lines", async () => {
    const created = await cliJsonHere(["buckets", "create", "--name", "cli-photos"], base);
    expect(created.name).toBe("cli-photos");
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    const list = await cliJsonHere(["buckets", "list"], base);
    expect(list.data.map((b: { name: string }) => b.name)).toContain("cli-photos");
    expect(list).toMatchObject({ total: expect.any(Number), hasMore: false });
    expect(await cliJsonHere(["buckets", "get", created.id], base)).toEqual(created);
    // the tool name works as a command too, and path parameters as flags
    expect(await cliJsonHere(["buckets_get", "--id", created.id], base)).toEqual(created);

    const table = await runCliHere(["buckets", "list"], base);
    expect(table.code).toBe(0);
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+CREATED AT$/);
    expect(table.stdout).toContain("cli-photos");
    const kv = await runCliHere(["buckets", "get", created.id], base);
    expect(kv.stdout).toMatch(/^id: +[0-9a-f-]{36}$/m);
    expect(kv.stdout).toMatch(/^name: +cli-photos$/m);
  });

  test("lists as comma lists or repeated flags; --all walks every page", async () => {
    const key = await cliJsonHere(["api-keys", "create", "--name", "ci", "--scopes", "read,write", "--scopes", "delete", "--expires-in-days", "7"], base);
    expect(key.scopes).toEqual(["read", "write", "delete"]);
    expect(key.secret).toMatch(/^[0-9a-f]{64}$/);
    for (const name of ["page-a", "page-b", "page-c"]) await cliJsonHere(["buckets", "create", "--name", name], base);
    const one = await cliJsonHere(["buckets", "list", "--limit", "1"], base);
    expect(one.data).toHaveLength(1);
    expect(one.hasMore).toBe(true);
    const all = await cliJsonHere(["buckets", "list", "--all"], base);
    expect(all.data.length).toBe(one.total);
    expect(all.hasMore).toBe(false);
    const me = await cliJsonHere(["me", "get"], base);
    expect(me.credential.scopes).toContain("admin");
  });

  test("--input gives the whole input as JSON; flags override it", async () => {
    const created = await cliJsonHere(["buckets", "create", "--input", '{"name":"from-input"}'], base);
    expect(created.name).toBe("from-input");
    const overridden = await cliJsonHere(["buckets", "create", "--input", '{"name":"ignored"}', "--name", "from-flag"], base);
    expect(overridden.name).toBe("from-flag");
  });
});

test("tools of every area are commands without CLI changes: tags, categories, search, storyboards, usage, billing", async () => {
  const bucket = await cliJsonHere(["buckets", "create", "--name", "organize"], base);
  const png = join(tempConfigHome(), "beach-day.png");
  writeFileSync(png, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]));
  const [uploaded] = await cliJsonHere(["upload", png, "--bucket", "organize", "--tags", "sunset,beach"], base);
  const id = uploaded.id as string;
  expect(uploaded.bucketId).toBe(bucket.id);
  // upload tags become the object's tags at confirm
  const tagNames = (o: { tags: { name: string }[] }) => o.tags.map((t) => t.name).sort();
  expect(tagNames(await cliJsonHere(["media", "get", id], base))).toEqual(["beach", "sunset"]);

  const keeper = await cliJsonHere(["tags", "create", "--name", "keeper"], base);
  expect(tagNames(await cliJsonHere(["objects", "set-tags", id, "--tag-ids", keeper.id], base))).toEqual(["keeper"]);
  const travel = await cliJsonHere(["categories", "create", "--name", "Travel"], base);
  await cliJsonHere(["categories", "create", "--name", "Europe", "--parent-id", travel.id], base);
  await cliJsonHere(["objects", "set-categories", id, "--category-ids", travel.id], base);
  const tree = await runCliHere(["categories", "list"], base);
  expect(tree.stdout).toMatch(/Travel\s+travel.*Europe/);

  const found = await cliJsonHere(["search", "--q", "beach-day"], base);
  expect(found.media.map((m: { id: string }) => m.id)).toContain(id);

  const board = await cliJsonHere(["storyboards", "create", "--name", "cut"], base);
  const a = await cliJsonHere(["storyboards", "add-clip", board.id, "--object-id", id, "--note", "first"], base);
  const b = await cliJsonHere(["storyboards", "add-clip", board.id, "--object-id", id, "--note", "second"], base);
  await cliJsonHere(["storyboards", "reorder-clips", board.id, "--clip-ids", `${b.id},${a.id}`], base);
  const got = await cliJsonHere(["storyboards", "get", board.id], base);
  expect(got.clips.map((c: { note: string }) => c.note)).toEqual(["second", "first"]);

  expect((await cliJsonHere(["usage", "get"], base)).objectCount).toBeGreaterThanOrEqual(1);
  const invoices = await runCliHere(["billing", "invoices-list"], base);
  expect(invoices.code).toBe(1);
  expect(invoices.stderr).toContain("(not_configured, HTTP 501");
});

describe("edges", () => {
  test("a tool's one required field may be the argument: media search sunset, media buckets create photos", async () => {
    const bucket = await cliJsonHere(["buckets", "create", "positional-args"], base);
    expect(bucket.name).toBe("positional-args");
    const png = join(tempConfigHome(), "sunset-harbour.png");
    writeFileSync(png, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 5, 6, 7, 8]));
    const [uploaded] = await cliJsonHere(["upload", png, "--bucket", bucket.id], base);
    const found = await cliJsonHere(["search", "sunset-harbour"], base);
    expect(found.media.map((m: { id: string }) => m.id)).toContain(uploaded.id);
    const twice = await runCliHere(["search", "a", "--q", "b"], base);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("give q once");
    const surplus = await runCliHere(["search", "a", "b"], base);
    expect(surplus.code).toBe(2);
    // The help shows the argument, not a required flag.
    expect((await runCliHere(["search", "--help"], base)).stdout).toContain("media search <q> [flags]");
  });

  test("a bucket by name or id wherever one is taken: --bucket-id, --bucket, and buckets get/delete", async () => {
    const bucket = await cliJsonHere(["buckets", "create", "--name", "by-name"], base);
    const png = join(tempConfigHome(), "named.png");
    writeFileSync(png, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 9, 9]));
    await cliJsonHere(["upload", png, "--bucket", "by-name"], base);
    for (const flags of [["--bucket-id", "by-name"], ["--bucket", "by-name"], ["--bucket-id", bucket.id]]) {
      const listed = await cliJsonHere(["media", "list", ...flags], base);
      expect({ flags, keys: listed.data.map((o: { key: string }) => o.key) }).toEqual({ flags, keys: ["named.png"] });
    }
    expect((await cliJsonHere(["buckets", "get", "by-name"], base)).id).toBe(bucket.id);
    const unknown = await runCliHere(["media", "list", "--bucket-id", "no-such-bucket"], base);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain("no bucket named 'no-such-bucket'");
    const empty = await cliJsonHere(["buckets", "create", "--name", "to-delete"], base);
    expect((await cliJsonHere(["buckets", "delete", "to-delete"], base)).id).toBe(empty.id);
  });

  test("a closed pipe ends the command quietly with status 0: media download ID -o - | head -c 8", async () => {
    const bucket = await cliJsonHere(["buckets", "create", "--name", "piped"], base);
    const big = join(tempConfigHome(), "big.bin");
    writeFileSync(big, new Uint8Array(4 * 1024 * 1024).fill(0x41));
    const [uploaded] = await cliJsonHere(["upload", big, "--bucket", bucket.id], base);
    const env = cliEnv({ url: server.url, key: org.adminKey.secret });
    const proc = Bun.spawn(["bash", "-c", `"${process.execPath}" "${CLI}" download ${uploaded.id} -o - | head -c 8; echo " status=\${PIPESTATUS[0]}"`], { env, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect(stdout).toBe("AAAAAAAA status=0\n");
    expect(stderr).toBe("");
  });
});

test("the single binary from `bun build --compile` runs the same commands", async () => {
  const out = join(tempConfigHome(), "media");
  // Asynchronous spawns only: the server under test runs in this process's event loop.
  const run = async (cmd: string[], env?: Record<string, string>) => {
    const proc = Bun.spawn(cmd, { env, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { stdout, stderr, code };
  };
  const build = await run([process.execPath, "build", "--compile", CLI, "--outfile", out]);
  expect(build.code).toBe(0);
  const env = cliEnv({ url: server.url, key: org.adminKey.secret });
  expect((await run([out, "--version"], env)).stdout).toMatch(/^media \d+\.\d+\.\d+\n$/);
  const list = await run([out, "buckets", "list", "--json"], env);
  expect(list.code).toBe(0);
  expect(Array.isArray(JSON.parse(list.stdout).data)).toBe(true);
  rmSync(out, { force: true });
});

describe("errors and exit codes", () => {
  test("a bad key: a clear message, exit 3, and the key is never echoed", async () => {
    const bad = "0".repeat(64);
    const r = await runCli(["buckets", "list"], { url: server.url, key: bad });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("error: Invalid API key (unauthorized, HTTP 401");
    expect(r.stderr).toContain("media login");
    expect(r.stderr + r.stdout).not.toContain(bad);
    const json = await runCliHere(["buckets", "list", "--json"], { url: server.url, key: bad });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: "unauthorized", status: 401 });
    expect(json.stdout).toBe("");
  });

  test("nothing configured: exit 3 with what to do", async () => {
    const r = await runCliHere(["buckets", "list"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("no service URL and API key configured: run `media login`, or set MEDIA_URL and MEDIA_API_KEY");
  });

  test("a scope the key lacks: exit 3", async () => {
    const reader = await org.keyClient(["read"]);
    const r = await runCliHere(["buckets", "create", "--name", "nope"], { url: server.url, key: reader.secret });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("forbidden");
  });

  test("unknown commands and bad flags are usage errors (exit 2) with suggestions, before any request", async () => {
    const unknown = await runCliHere(["bukets", "list"], base);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'bukets' (did you mean buckets?)");
    const verb = await runCliHere(["buckets", "lst"], base);
    expect(verb.code).toBe(2);
    expect(verb.stderr).toContain("unknown command 'buckets lst' (did you mean list?)");
    const flag = await runCliHere(["buckets", "create", "--nmae", "x"], base);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("unknown flag --nmae (did you mean --name?)");
    expect(flag.stderr).toContain("Run 'media buckets create --help' for usage.");
    const missing = await runCliHere(["buckets", "create"], base);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing --name");
    const type = await runCliHere(["buckets", "list", "--limit", "many"], base);
    expect(type.code).toBe(2);
    expect(type.stderr).toContain("--limit expects a number");
    const extra = await runCliHere(["buckets", "get", crypto.randomUUID(), "surplus"], base);
    expect(extra.code).toBe(2);
  });

  test("schema violations name the flag or argument (exit 2); not found is exit 4", async () => {
    const invalid = await runCliHere(["buckets", "create", "--name", "bad name!"], base);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain("error: Invalid input (validation_error)");
    expect(invalid.stderr).toMatch(/--name: 1-63 characters/);
    const notUuid = await runCliHere(["media", "get", "not-a-uuid"], base);
    expect(notUuid.code).toBe(2);
    expect(notUuid.stderr).toContain("<id>: Invalid UUID");
    const missing = await runCliHere(["media", "get", crypto.randomUUID()], base);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain("Media object not found (not_found, HTTP 404, request ");
  });

  test("a conflict is exit 1 with the service's message", async () => {
    await cliJsonHere(["buckets", "create", "--name", "twice"], base);
    const again = await runCliHere(["buckets", "create", "--name", "twice"], base);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("conflict");
  });
});

describe("login and profiles", () => {
  test("media login checks the key, writes the profile with mode 0600, and later commands use it", async () => {
    const home = tempConfigHome();
    const login = await runCli(["login", "--url", `${server.url}/api/`, "--key", "-"], { configHome: home, stdin: `${org.adminKey.secret}\n` });
    expect(login.code).toBe(0);
    expect(login.stdout).toContain(`Logged in to ${server.url} as organization "Test org"`);
    expect(login.stdout + login.stderr).not.toContain(org.adminKey.secret);
    const file = join(home, "media", "config.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "media")).mode & 0o777).toBe(0o700);
    const config = JSON.parse(readFileSync(file, "utf8"));
    expect(config).toEqual({ defaultProfile: "default", profiles: { default: { url: server.url, apiKey: org.adminKey.secret } } });

    // no MEDIA_* variables: the default profile is used
    const listed = await runCliHere(["buckets", "list", "--json"], { configHome: home });
    expect(listed.code).toBe(0);

    // a second profile with a read-only key, selected by --profile or MEDIA_PROFILE
    const reader = await org.keyClient(["read"]);
    expect((await runCliHere(["login", "--url", server.url, "--key", reader.secret, "--profile", "ro"], { configHome: home })).code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const roMe = await cliJsonHere(["me", "get", "--profile", "ro"], { configHome: home });
    expect(roMe.credential.scopes).toEqual(["read"]);
    const envMe = await cliJsonHere(["me", "get"], { configHome: home, extra: { MEDIA_PROFILE: "ro" } });
    expect(envMe.credential.scopes).toEqual(["read"]);

    const profiles = await runCliHere(["profiles", "list"], { configHome: home });
    expect(profiles.stdout).toContain("default");
    expect(profiles.stdout).toContain("ro");
    expect(profiles.stdout).not.toContain(reader.secret);
    expect(profiles.stdout).not.toContain(org.adminKey.secret);
    expect((await runCliHere(["profiles", "use", "ro"], { configHome: home })).code).toBe(0);
    expect((await cliJsonHere(["me", "get"], { configHome: home })).credential.scopes).toEqual(["read"]);
    expect((await runCliHere(["logout", "--profile", "ro"], { configHome: home })).code).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ defaultProfile: "default", profiles: { default: expect.any(Object) } });
    const unknownProfile = await runCliHere(["me", "get", "--profile", "ro"], { configHome: home });
    expect(unknownProfile.code).toBe(2);
    expect(unknownProfile.stderr).toContain("no profile named 'ro'");
  });

  test("a refused key is not saved", async () => {
    const home = tempConfigHome();
    const r = await runCliHere(["login", "--url", server.url, "--key", "f".repeat(64)], { configHome: home });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("Invalid API key");
    expect(existsSync(join(home, "media", "config.json"))).toBe(false);
  });

  test("without a terminal, login needs --url", async () => {
    const r = await runCli(["login"], { stdin: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--url is required");
  });
});
