import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { UsageError } from "./flags.ts";

/**
 * Profiles, like aws and gh: `$XDG_CONFIG_HOME/media/config.json` (else ~/.config/media),
 * written with mode 0600 because it holds API keys.
 */

export interface Profile {
  url: string;
  apiKey: string;
}

export interface ConfigFile {
  defaultProfile?: string;
  profiles: Record<string, Profile>;
}

export type Env = Record<string, string | undefined>;

export function configDir(env: Env): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "media");
}

export const configPath = (env: Env) => join(configDir(env), "config.json");

export function loadConfigFile(env: Env): ConfigFile {
  const path = configPath(env);
  if (!existsSync(path)) return { profiles: {} };
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<ConfigFile>;
    return { ...parsed, profiles: parsed.profiles ?? {} };
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

/** Atomic (write then rename) and private: the file and its directory are the user's alone. */
export function saveConfigFile(env: Env, config: ConfigFile): string {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = configPath(env);
  writePrivate(path, `${JSON.stringify(config, null, 2)}\n`);
  return path;
}

export function writePrivate(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** A config readable by others is worth a warning (ssh does the same). */
export function configPermissionWarning(env: Env): string | null {
  const path = configPath(env);
  try {
    const mode = statSync(path).mode & 0o777;
    return mode & 0o077 ? `warning: ${path} is readable by other users (mode ${mode.toString(8)}); run chmod 600 ${path}` : null;
  } catch {
    return null;
  }
}

export interface Overrides {
  profile?: string;
  url?: string;
  apiKey?: string;
}

export interface Settings {
  profile: string;
  url: string | null;
  apiKey: string | null;
  /** Where each value came from, for messages (never the value of the key). */
  source: { url: string | null; apiKey: string | null };
}

export const DEFAULT_PROFILE = "default";

/**
 * Each of URL and key is taken from the first that has it:
 * 1. the --url / --api-key flags;
 * 2. the profile named by --profile (an explicit choice beats the environment);
 * 3. MEDIA_URL / MEDIA_API_KEY;
 * 4. the profile named by MEDIA_PROFILE, else the config's default profile, else "default".
 */
export function resolveSettings(flags: Overrides, env: Env, file: ConfigFile): Settings {
  const explicit = flags.profile ?? null;
  const name = explicit ?? (env.MEDIA_PROFILE || file.defaultProfile || DEFAULT_PROFILE);
  const profile = file.profiles[name];
  if (!profile && (explicit || env.MEDIA_PROFILE)) {
    const known = Object.keys(file.profiles);
    throw new UsageError(`no profile named '${name}'${known.length ? ` (profiles: ${known.join(", ")})` : ""}; create it with: media login --profile ${name}`);
  }
  const pick = (flag: string | undefined, envValue: string | undefined, fromProfile: string | undefined): [string | null, string | null] => {
    if (flag) return [flag, "flag"];
    if (explicit && fromProfile) return [fromProfile, `profile ${name}`];
    if (envValue) return [envValue, "environment"];
    if (fromProfile) return [fromProfile, `profile ${name}`];
    return [null, null];
  };
  const [url, urlSource] = pick(flags.url, env.MEDIA_URL, profile?.url);
  const [apiKey, keySource] = pick(flags.apiKey, env.MEDIA_API_KEY, profile?.apiKey);
  return { profile: name, url: url ? normalizeUrl(url) : null, apiKey, source: { url: urlSource, apiKey: keySource } };
}

/** `https://host/` and `https://host/api` both mean the service at https://host. */
export function normalizeUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`not a URL: '${url}' (expected e.g. https://media.example.com)`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new UsageError(`not an http(s) URL: '${url}'`);
  return `${u.origin}${u.pathname.replace(/\/+$/, "").replace(/\/api$/, "")}`;
}
