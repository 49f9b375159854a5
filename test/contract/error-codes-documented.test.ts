import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { errorCatalogue } from "../../domain/core/errors.ts";

/** The error table of docs/conventions.md is the catalogue's, code for code and status for status. */
test("docs/conventions.md lists every error code with its status, and no other", () => {
  const page = readFileSync(join(import.meta.dir, "../../docs/conventions.md"), "utf8");
  const table = page.slice(page.indexOf("### Errors"), page.indexOf("### Headers"));
  const documented: Record<string, number> = {};
  for (const [, status, codes] of table.matchAll(/^\| (\d{3}) \| ([^|]+) \|/gm)) {
    for (const [, code] of codes!.matchAll(/`(\w+)`/g)) documented[code!] = Number(status);
  }
  const catalogue = Object.fromEntries(Object.entries(errorCatalogue).map(([code, { status }]) => [code, status]));
  expect(documented).toEqual(catalogue);
});
