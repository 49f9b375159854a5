/**
 * The methods each route answers, read from the router's own table, so that a request with the
 * wrong method on a path that exists is told 405 and the methods it may use (`Allow`), rather
 * than 404 as if the path did not exist. Routes that take every method (`/api/*`, `/mcp`) name
 * no method and are left out; a wildcard route of one method (`GET /console/*`) covers every
 * path under it.
 */
export function allowedMethods(routes: () => readonly { method: string; path: string }[]): (path: string) => string[] {
  let table: { pattern: RegExp; methods: Set<string> }[] | undefined;
  const build = () => {
    const byPath = new Map<string, Set<string>>();
    for (const route of routes()) {
      if (route.method === "ALL") continue;
      const methods = byPath.get(route.path) ?? new Set<string>();
      methods.add(route.method.toUpperCase());
      // Bun answers HEAD for every GET route.
      if (route.method.toUpperCase() === "GET") methods.add("HEAD");
      byPath.set(route.path, methods);
    }
    return [...byPath].map(([path, methods]) => ({
      pattern: new RegExp(`^${path.split("/").map(segment).join("/")}/?$`),
      methods,
    }));
  };
  return (path) => {
    // Built at the first request, once every route (extra routes included) is registered.
    table ??= build();
    const found = new Set<string>();
    for (const { pattern, methods } of table) if (pattern.test(path)) for (const m of methods) found.add(m);
    return [...found].sort();
  };
}

/** A route path's segment as a pattern: `:id` is one segment, `*` the rest of the path. */
function segment(s: string): string {
  if (s.startsWith(":")) return "[^/]+";
  if (s === "*") return ".*";
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
