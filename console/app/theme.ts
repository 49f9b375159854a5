import { signal } from "@preact/signals";

export type Theme = "system" | "light" | "dark";
const KEY = "media-console.theme";

export const theme = signal<Theme>((localStorage.getItem(KEY) as Theme | null) ?? "system");

/** The theme is an attribute on <html>; "system" leaves it to prefers-color-scheme. */
export function applyTheme(next: Theme = theme.value): void {
  theme.value = next;
  localStorage.setItem(KEY, next);
  if (next === "system") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = next;
}
