import type { SQL } from "drizzle-orm";
import { type Db, rowsOf } from "../../db/client.ts";
import { preparedSql } from "../core/prepared.ts";
import { NO_VIEWS, type ViewsRow } from "./view-rows.ts";

/**
 * Media views' JSON text, kept by the versions of the rows they were written from
 * (view-rows.ts, rowVersionOf), for the listings asked most: a page of 100 views cost PostgreSQL
 * two thirds of the listing's statement to write (16 µs a view), every time, for views that had
 * not changed. A listing now asks PostgreSQL for its page's versions and takes each view whose
 * versions are kept; the others are written by PostgreSQL and kept.
 *
 * Never stale: a version names one content of both rows (PostgreSQL writes every change as a new
 * row version at a new place), so a kept view is the view PostgreSQL would write now, whichever
 * code or instance changed the rows. Per process and per database handle (two databases, or a
 * database and its copy, may hold the same version with different content): nothing is told to
 * other instances. Kept views go after TTL_MS, long before transaction ids could come round
 * again, and the least recently used first beyond MAX_BYTES.
 */
const TTL_MS = 10 * 60_000;
const MAX_BYTES = 16 * 1024 * 1024;

interface Kept {
  text: string;
  /** Whether the text holds a thumbnail path to sign (view-rows.ts, signedViews). */
  marked: boolean;
  at: number;
}

export class ViewCache {
  private readonly entries = new Map<string, Kept>();
  /** Each object's version kept last: whether a page of known ids is worth asking for its versions first. */
  private readonly latest = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  get(version: string): Kept | undefined {
    const kept = this.entries.get(version);
    if (!kept) return undefined;
    this.entries.delete(version);
    if (this.now() - kept.at > TTL_MS) {
      this.forget(version, kept);
      return undefined;
    }
    // Most recently used last: the Map's order is the order they go in.
    this.entries.set(version, kept);
    return kept;
  }

  set(version: string, text: string, marked: boolean): void {
    const old = this.entries.get(version);
    if (old) {
      this.entries.delete(version);
      this.bytes -= size(version, old);
    }
    const kept = { text, marked, at: this.now() };
    this.entries.set(version, kept);
    this.latest.set(idOf(version), version);
    this.bytes += size(version, kept);
    for (const [v, k] of this.entries) {
      if (this.bytes <= MAX_BYTES) break;
      this.entries.delete(v);
      this.forget(v, k);
    }
  }

  /** Whether a view of any of these objects is kept (of any version). */
  holdsAny(ids: readonly string[]): boolean {
    return ids.some((id) => this.latest.has(id));
  }

  private forget(version: string, kept: Kept): void {
    this.bytes -= size(version, kept);
    const id = idOf(version);
    if (this.latest.get(id) === version) this.latest.delete(id);
  }

  /** Views kept, and their bytes (tests, diagnostics). */
  get stats(): { views: number; bytes: number; objects: number } {
    return { views: this.entries.size, bytes: this.bytes, objects: this.latest.size };
  }
}

/** Two bytes a character, and the entry's own overhead. */
const size = (version: string, kept: Kept) => 2 * (version.length + kept.text.length) + 64;

const caches = new WeakMap<Db, ViewCache>();

export function viewCacheFor(db: Db): ViewCache {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new ViewCache()));
  return cache;
}

/** The id a version token starts with. */
const idOf = (version: string) => version.slice(0, version.indexOf("/"));

/**
 * The views of a page whose versions are `versions` (versionsOverPage's answer), of the
 * organization `orgId`: kept ones as kept, the rest written by PostgreSQL by id (`versioned`, a
 * viewsWithVersions statement over the placeholders `ids` and `orgId`) and kept. null when a row
 * changed between the two statements (a view read is not the version the page was cut from):
 * the caller then answers from one statement, the page and its views under one snapshot.
 */
export async function keptViews(db: Db, orgId: string, versions: string, versioned: { name: string; build: () => SQL }): Promise<ViewsRow | null> {
  if (!versions) return NO_VIEWS;
  const cache = viewCacheFor(db);
  const tokens = versions.split(" ");
  const texts: string[] = new Array(tokens.length);
  const missing: number[] = [];
  let marked = false;
  for (let i = 0; i < tokens.length; i++) {
    const kept = cache.get(tokens[i]!);
    if (!kept) missing.push(i);
    else {
      texts[i] = kept.text;
      marked ||= kept.marked;
    }
  }
  if (missing.length > 0) {
    const [row] = rowsOf<{ entries: string | null }>(
      await preparedSql(db, versioned.name, versioned.build).execute({ ids: missing.map((i) => idOf(tokens[i]!)).join(","), orgId }),
    );
    const written = new Map(entriesOf(row?.entries ?? "").map((e) => [e.version, e]));
    for (const e of written.values()) cache.set(e.version, e.text, e.marked);
    for (const i of missing) {
      const e = written.get(tokens[i]!);
      if (!e) return null;
      texts[i] = e.text;
      marked ||= e.marked;
    }
  }
  return { views: `[${texts.join(",")}]`, n: tokens.length, ids: tokens.map(idOf).join(","), marked };
}

/** The views of a viewsWithVersions answer (`entries`), in its order, each kept. */
export function viewsOfEntries(db: Db, entries: string): ViewsRow {
  const views = entriesOf(entries);
  if (views.length === 0) return NO_VIEWS;
  const cache = viewCacheFor(db);
  for (const e of views) cache.set(e.version, e.text, e.marked);
  return { views: `[${views.map((e) => e.text).join(",")}]`, n: views.length, ids: views.map((e) => idOf(e.version)).join(","), marked: views.some((e) => e.marked) };
}

/** A viewsWithVersions answer's views: `<version>\x01<1 or 0>\x01<JSON>`, joined by \x02. */
function entriesOf(entries: string): { version: string; marked: boolean; text: string }[] {
  if (!entries) return [];
  return entries.split("\x02").map((entry) => {
    const a = entry.indexOf("\x01");
    return { version: entry.slice(0, a), marked: entry.charCodeAt(a + 1) === 49 /* "1" */, text: entry.slice(a + 3) };
  });
}
