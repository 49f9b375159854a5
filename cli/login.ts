import { findTool } from "../tools/registry.ts";
import { RestClient } from "./client.ts";
import { type Command, EXIT } from "./context.ts";
import { configPath, DEFAULT_PROFILE, loadConfigFile, normalizeUrl, saveConfigFile } from "./config.ts";
import { UsageError } from "./flags.ts";
import { render, renderJson } from "./output.ts";
import { ask } from "./prompt.ts";

interface Me {
  organization: { id: string; name: string };
  credential: { type: string; scopes: string[]; bucketId: string | null; expiresAt: string | null };
}

const login: Command = {
  path: ["login"],
  section: "setup",
  title: "Save a service URL and API key as a profile",
  description:
    "Checks the URL and key with GET /api/me, then stores them in the config file (mode 0600) under the profile named by --profile " +
    "(else MEDIA_PROFILE, else 'default'). Asks for whatever is missing when run in a terminal; otherwise the key may come on stdin.",
  positionals: [],
  flags: [{ name: "key", type: "string", placeholder: "secret|-", description: "The API key (its secret); - reads it from stdin. Asked for when omitted" }],
  notes:
    "Examples:\n  media login --url https://media.example.com\n  media login --url https://media.example.com --profile prod --key - < key.txt\n\n" +
    "--api-key works like --key. The key is never printed.",
  async run(ctx, args) {
    let url = ctx.globals.url ?? null;
    let key = (args.values.key as string | undefined) ?? ctx.globals.apiKey ?? null;
    if (!url) {
      if (!ctx.stdinIsTTY) throw new UsageError("--url is required when stdin is not a terminal", "login");
      url = await ask("Service URL: ", ctx.err);
    }
    url = normalizeUrl(url);
    if (!key || key === "-") {
      if (ctx.stdinIsTTY && key !== "-") key = await ask("API key (input hidden): ", ctx.err, { hidden: true });
      else key = (await Bun.stdin.text()).trim();
    }
    if (!key) throw new UsageError("no API key given: pass --key, or pipe it on stdin", "login");

    const me = await new RestClient({ url, apiKey: key }).call<Me>(findTool("me_get")!, {});
    const profile = ctx.globals.profile ?? ctx.env.MEDIA_PROFILE ?? DEFAULT_PROFILE;
    const file = loadConfigFile(ctx.env);
    file.profiles[profile] = { url, apiKey: key };
    file.defaultProfile ??= profile;
    const path = saveConfigFile(ctx.env, file);
    const summary = {
      profile,
      url,
      organization: me.organization.name,
      scopes: me.credential.scopes,
      bucketId: me.credential.bucketId,
      expiresAt: me.credential.expiresAt,
      default: file.defaultProfile === profile,
      configFile: path,
    };
    if (ctx.globals.json) ctx.out(renderJson(summary));
    else {
      const restricted = me.credential.bucketId ? `, bucket ${me.credential.bucketId} only` : "";
      ctx.out(`Logged in to ${url} as organization "${me.organization.name}" (scopes: ${me.credential.scopes.join(", ")}${restricted}).\n`);
      ctx.out(`Saved profile '${profile}' in ${path}${summary.default ? " (the default profile)" : `; use it with --profile ${profile}`}.\n`);
    }
    return EXIT.ok;
  },
};

const logout: Command = {
  path: ["logout"],
  section: "setup",
  title: "Remove a saved profile",
  description: "Deletes the profile named by --profile (else MEDIA_PROFILE, else the default profile) from the config file. The key itself stays valid: delete it with `media api-keys delete`.",
  positionals: [],
  flags: [],
  async run(ctx) {
    const file = loadConfigFile(ctx.env);
    const name = ctx.globals.profile ?? ctx.env.MEDIA_PROFILE ?? file.defaultProfile ?? DEFAULT_PROFILE;
    if (!file.profiles[name]) throw new UsageError(`no profile named '${name}'`, "logout");
    delete file.profiles[name];
    if (file.defaultProfile === name) {
      const rest = Object.keys(file.profiles);
      if (rest.length > 0) file.defaultProfile = rest[0];
      else delete file.defaultProfile;
    }
    saveConfigFile(ctx.env, file);
    ctx.out(ctx.globals.json ? renderJson({ profile: name, removed: true }) : `Removed profile '${name}'.\n`);
    return EXIT.ok;
  },
};

const profilesList: Command = {
  path: ["profiles", "list"],
  section: "setup",
  title: "List saved profiles",
  description: "Profiles in the config file with their URLs (never their keys).",
  positionals: [],
  flags: [],
  async run(ctx) {
    const file = loadConfigFile(ctx.env);
    const rows = Object.entries(file.profiles).map(([name, p]) => ({ name, url: p.url, default: file.defaultProfile === name, apiKey: p.apiKey ? "(set)" : "-" }));
    if (ctx.globals.json) ctx.out(renderJson(rows.map(({ apiKey: _, ...r }) => r)));
    else ctx.out(rows.length ? render(rows, { width: ctx.columns() }) : `No profiles in ${configPath(ctx.env)}: run media login.\n`);
    return EXIT.ok;
  },
};

const profilesUse: Command = {
  path: ["profiles", "use"],
  section: "setup",
  title: "Make a profile the default",
  description: "Sets the profile used when neither --profile nor MEDIA_PROFILE names one.",
  positionals: [{ name: "name", required: true }],
  flags: [],
  async run(ctx, args) {
    const [name] = args.positionals;
    if (!name || args.positionals.length > 1) throw new UsageError("give one profile name", "profiles use");
    const file = loadConfigFile(ctx.env);
    if (!file.profiles[name]) throw new UsageError(`no profile named '${name}' (profiles: ${Object.keys(file.profiles).join(", ") || "none"})`, "profiles use");
    file.defaultProfile = name;
    saveConfigFile(ctx.env, file);
    ctx.out(ctx.globals.json ? renderJson({ defaultProfile: name }) : `Default profile: ${name}\n`);
    return EXIT.ok;
  },
};

export const loginCommands = [login, logout, profilesList, profilesUse];
