import { signRequest } from "../domain/access/http-signatures.ts";
import type { AnyTool } from "../tools/define.ts";
import { ApiError, RestClient } from "./client.ts";
import { configPermissionWarning, type Env, loadConfigFile, resolveSettings, type Settings } from "./config.ts";
import type { FlagSpec, ParsedArgs, PositionalSpec } from "./flags.ts";

/** Exit codes (docs/cli.md). */
export const EXIT = { ok: 0, error: 1, usage: 2, auth: 3, notFound: 4, interrupted: 130 } as const;

export interface Globals {
  json: boolean;
  quiet: boolean;
  help: boolean;
  profile?: string;
  url?: string;
  apiKey?: string;
}

/** Flags every command takes. */
export const GLOBAL_FLAGS: FlagSpec[] = [
  { name: "json", type: "boolean", description: "Print results as JSON (errors too, on stderr)" },
  { name: "profile", type: "string", placeholder: "name", description: "Use this saved profile (see media login)" },
  { name: "url", type: "string", placeholder: "url", description: "Service URL, overriding the profile and MEDIA_URL" },
  { name: "apiKey", type: "string", placeholder: "secret", description: "API key, overriding the profile and MEDIA_API_KEY (prefer those: flags show up in ps)" },
  { name: "quiet", type: "boolean", short: "q", description: "No progress bars or notes on stderr" },
  { name: "help", type: "boolean", short: "h", description: "Show help" },
];

export interface Io {
  env: Env;
  out(text: string): void;
  err(text: string): void;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  stdinIsTTY: boolean;
  /** Terminal width of stdout, or null for a pipe. */
  columns(): number | null;
}

export interface Context extends Io {
  globals: Globals;
  /** URL and key from flags, environment and profiles. */
  settings(): Settings;
  /** A client for the configured service; throws when URL or key is missing. */
  client(): RestClient;
}

export interface Command {
  /** Words after `media`: ["buckets", "list"]. */
  path: string[];
  title: string;
  description: string;
  positionals: PositionalSpec[];
  flags: FlagSpec[];
  /** Set for commands derived from the registry. */
  tool?: AnyTool;
  /** Extra help text after the flags. */
  notes?: string;
  /** Where the command is listed in the top-level help. */
  section: "transfer" | "setup" | "api";
  run(ctx: Context, args: ParsedArgs): Promise<number>;
}

/** An interruption the user asked for (Ctrl-C) or a test simulated: exit 130. */
export class Interrupted extends Error {}

/** No URL or no key: a setup problem, reported like an authentication failure (exit 3). */
export class NotConfigured extends Error {}

export function createContext(io: Io, globals: Globals): Context {
  let settings: Settings | undefined;
  let client: RestClient | undefined;
  const ctx: Context = {
    ...io,
    globals,
    settings() {
      if (!settings) {
        settings = resolveSettings({ profile: globals.profile, url: globals.url, apiKey: globals.apiKey }, io.env, loadConfigFile(io.env));
        if (settings.source.apiKey?.startsWith("profile")) {
          const warning = configPermissionWarning(io.env);
          if (warning) io.err(`${warning}\n`);
        }
      }
      return settings;
    },
    client() {
      if (client) return client;
      const s = ctx.settings();
      // A service credential in the environment signs every request instead of a bearer.
      const signing = io.env.MEDIA_SIGNING_KEY_ID && io.env.MEDIA_SIGNING_SECRET ? { keyId: io.env.MEDIA_SIGNING_KEY_ID, secret: io.env.MEDIA_SIGNING_SECRET } : undefined;
      if (!s.url || (!s.apiKey && !signing)) {
        const missing = [!s.url && "service URL", !s.apiKey && "API key"].filter(Boolean).join(" and ");
        throw new NotConfigured(`no ${missing} configured: run \`media login\`, or set MEDIA_URL and MEDIA_API_KEY`);
      }
      client = new RestClient({
        url: s.url,
        apiKey: signing ? null : s.apiKey,
        ...(signing ? { sign: (request: { method: string; url: string; body?: Uint8Array }) => signRequest(request, signing) } : {}),
        onRetry: ({ waitMs, reason }) => {
          if (waitMs >= 2000 && !globals.quiet) io.err(`note: ${reason}; retrying in ${(waitMs / 1000).toFixed(0)}s\n`);
        },
      });
      return client;
    },
  };
  return ctx;
}

export function exitCodeOf(err: ApiError): number {
  if (err.code === "unauthorized" || err.code === "forbidden") return EXIT.auth;
  if (err.status === 404 || err.code === "not_found") return EXIT.notFound;
  if (err.status === 400 || err.code === "validation_error" || err.code === "bad_request") return EXIT.usage;
  return EXIT.error;
}
