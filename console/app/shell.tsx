import type { ComponentType } from "preact";
import { lazy, Suspense } from "preact/compat";
import { useEffect } from "preact/hooks";
import { can, me, signOut } from "./api.ts";
import { AccountPage } from "./pages/account.tsx";
import { BucketsPage } from "./pages/buckets.tsx";
import { CategoriesPage } from "./pages/categories.tsx";
import { ConsentPage } from "./pages/consent.tsx";
import { GrantsPage } from "./pages/grants.tsx";
import { KeysPage } from "./pages/keys.tsx";
import { MediaPage } from "./pages/media.tsx";
import { TrashPage } from "./pages/trash.tsx";
import { SearchPage } from "./pages/search.tsx";
import { SetPage, SetsPage } from "./pages/sets.tsx";
import { SignInPage } from "./pages/sign-in.tsx";
import { StoryboardPage, StoryboardsPage } from "./pages/storyboards.tsx";
import { UsagePage } from "./pages/usage.tsx";
import { location, navigate } from "./router.ts";
import { applyTheme, type Theme, theme } from "./theme.ts";
import { Link, Loading, Toasts } from "./ui/kit.tsx";

// The explorer carries every tool's schemas: loaded when first opened, not with the console.
const ToolsPage = lazy(() => import("./pages/tools.tsx").then((m) => m.ToolsPage));
// A bucket's duplicate groups: a page of its own, loaded when first opened.
const DuplicatesPage = lazy(() => import("./pages/duplicates.tsx").then((m) => m.DuplicatesPage));

interface Route {
  pattern: RegExp;
  page: ComponentType<{ params: string[] }>;
  /** The nav entry it belongs to. */
  section: string;
}

const ROUTES: Route[] = [
  { pattern: /^\/buckets$/, page: BucketsPage, section: "buckets" },
  { pattern: /^\/buckets\/([\w-]+)$/, page: MediaPage, section: "buckets" },
  { pattern: /^\/buckets\/([\w-]+)\/duplicates$/, page: DuplicatesPage as ComponentType<{ params: string[] }>, section: "buckets" },
  { pattern: /^\/trash$/, page: TrashPage, section: "trash" },
  { pattern: /^\/search$/, page: SearchPage, section: "search" },
  { pattern: /^\/categories$/, page: CategoriesPage, section: "categories" },
  { pattern: /^\/sets$/, page: SetsPage, section: "sets" },
  { pattern: /^\/sets\/([\w-]+)$/, page: SetPage, section: "sets" },
  { pattern: /^\/storyboards$/, page: StoryboardsPage, section: "storyboards" },
  { pattern: /^\/storyboards\/([\w-]+)$/, page: StoryboardPage, section: "storyboards" },
  { pattern: /^\/usage$/, page: UsagePage, section: "usage" },
  { pattern: /^\/keys$/, page: KeysPage, section: "keys" },
  { pattern: /^\/grants$/, page: GrantsPage, section: "grants" },
  { pattern: /^\/oauth\/consent$/, page: ConsentPage, section: "grants" },
  { pattern: /^\/tools(?:\/(\w+))?$/, page: ToolsPage as ComponentType<{ params: string[] }>, section: "tools" },
  { pattern: /^\/account$/, page: AccountPage, section: "account" },
];

const NAV: { section: string; to: string; label: string; tool: string | null }[] = [
  { section: "buckets", to: "/buckets", label: "Buckets", tool: "buckets_list" },
  { section: "trash", to: "/trash", label: "Trash", tool: "trash_list" },
  { section: "search", to: "/search", label: "Search", tool: "search" },
  { section: "categories", to: "/categories", label: "Categories", tool: "categories_list" },
  { section: "sets", to: "/sets", label: "Sets", tool: "sets_list" },
  { section: "storyboards", to: "/storyboards", label: "Storyboards", tool: "storyboards_list" },
  { section: "usage", to: "/usage", label: "Usage & billing", tool: "usage_get" },
  { section: "keys", to: "/keys", label: "API keys", tool: "api_keys_list" },
  { section: "grants", to: "/grants", label: "Connected apps", tool: "oauth_grants_list" },
  { section: "tools", to: "/tools", label: "Tool explorer", tool: null },
  { section: "account", to: "/account", label: "Account", tool: null },
];

function home(): string {
  const bucket = me.value?.credential.bucketId;
  return bucket ? `/buckets/${bucket}` : "/buckets";
}

export function App() {
  const who = me.value;
  const { path } = location.value;
  const match = ROUTES.map((r) => ({ r, m: r.pattern.exec(path) })).find((x) => x.m);
  useEffect(() => {
    if (who && !match) navigate(home(), { replace: true });
  }, [who, path]);
  if (!who) return <SignInPage />;
  const Page = match?.r.page;
  return (
    <div class="layout">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link to={home()} class="brand">
          <svg width="22" height="22" viewBox="0 0 32 32" aria-hidden="true">
            <rect width="32" height="32" rx="7" fill="currentColor" />
            <path d="M7 22l6-8 5 6 3-4 4 6z" fill="var(--bg)" />
          </svg>
          Media console
        </Link>
        <div class="who">
          <span class="org">{who.organization.name}</span>
          <span class="muted">
            {who.credential.type === "jwt" ? who.user.email ?? "dashboard user" : `key ${who.credential.accessKeyId}`}
          </span>
          <ThemePicker />
          <button type="button" class="small" onClick={() => signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <nav class="side" aria-label="Console">
        <ul>
          {NAV.filter((n) => n.tool === null || can(n.tool)).map((n) => (
            <li key={n.section}>
              <Link to={n.to} aria-current={match?.r.section === n.section ? "page" : undefined}>
                {n.label}
              </Link>
            </li>
          ))}
        </ul>
        <p class="side-foot">
          <a href="/api/docs">API reference</a>
        </p>
      </nav>
      <main id="main" tabIndex={-1}>
        {Page && match?.m ? (
          <Suspense fallback={<Loading />}>
            <Page key={path} params={match.m.slice(1).filter((x): x is string => x !== undefined)} />
          </Suspense>
        ) : (
          <Loading />
        )}
      </main>
      <Toasts />
    </div>
  );
}

function ThemePicker() {
  return (
    <label class="theme-picker">
      <span class="visually-hidden">Theme</span>
      <select value={theme.value} onChange={(e) => applyTheme((e.target as HTMLSelectElement).value as Theme)}>
        <option value="system">System</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}
