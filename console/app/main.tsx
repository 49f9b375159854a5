/**
 * The console's entry: it imports nothing statically, so this line runs before any module of
 * the app. zod (the registry's schemas come with the console) compiles object parsers with
 * `new Function` after probing whether eval is allowed; the console's CSP forbids eval, and
 * Chromium reports even the caught probe as a violation. The console parses nothing with zod
 * (the server does), so zod is told not to try, through its global config, which it reads
 * when its first object schema is made (in the shared chunk, evaluated before any importer).
 */
const zodGlobal = globalThis as { __zod_globalConfig?: Record<string, unknown> };
zodGlobal.__zod_globalConfig = { ...zodGlobal.__zod_globalConfig, jitless: true };
await import("./start.tsx");
export {};
