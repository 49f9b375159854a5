import { signal } from "@preact/signals";

/** Routes are paths under /console; the server answers every one of them with the app. */
export const BASE = "/console";

export const location = signal(currentLocation());

function currentLocation() {
  return { path: window.location.pathname.replace(/^\/console/, "") || "/", query: new URLSearchParams(window.location.search) };
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = to.startsWith(BASE) ? to : `${BASE}${to}`;
  if (opts.replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  location.value = currentLocation();
}

/** Changes the query string of the current route (filters), keeping the history short. */
export function setQuery(values: Record<string, string | null | undefined>): void {
  const q = new URLSearchParams(location.value.query);
  for (const [k, v] of Object.entries(values)) {
    if (v === null || v === undefined || v === "") q.delete(k);
    else q.set(k, v);
  }
  const qs = q.toString();
  navigate(`${location.value.path}${qs ? `?${qs}` : ""}`, { replace: true });
}

window.addEventListener("popstate", () => {
  location.value = currentLocation();
});
