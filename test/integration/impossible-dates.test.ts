import { describe, expect, test } from "bun:test";
import { withServerAndOrg } from "../support/fixtures.ts";
import type { TestOrg } from "../support/server.ts";

/**
 * A date that does not exist is a 400 naming the field, never a filter on another day: the
 * runtime's Date.parse rolls 2026-02-30 over to March 2, which the search used to filter on.
 */
let org: TestOrg;
withServerAndOrg({ ready: (made) => void ({ org } = made) });

const IMPOSSIBLE = ["2026-02-30", "2025-02-29", "2026-04-31", "2026-13-01", "2026-00-10", "2026-02-30T10:00:00Z", "2026-03-01T24:00:00Z", "2026-03-01T10:60:00Z", "2026-03-01T10:00:00+25:00"];
const POSSIBLE = ["2024-02-29", "2026-02-28", "2026-12-31T23:59:59Z", "2026-03-01T10:00:00.5+02:00", "2026-03-01T10:00Z"];

describe("date filters take only dates that exist", () => {
  // The audit log's bounds are UTC date-times only (they always were).
  for (const [path, fields, possible] of [
    ["/api/search?q=x", ["dateFrom", "dateTo", "takenAfter", "takenBefore"], POSSIBLE],
    ["/api/media?limit=1", ["takenAfter", "takenBefore"], POSSIBLE],
    ["/api/audit?limit=1", ["from", "to"], ["2024-02-29T00:00:00Z", "2026-12-31T23:59:59.999Z"]],
  ] as const) {
    test(`${path.split("?")[0]}: ${fields.join(", ")}`, async () => {
      for (const field of fields) {
        for (const value of IMPOSSIBLE) {
          const res = await org.admin.get(`${path}&${field}=${encodeURIComponent(value)}`);
          expect({ field, value, status: res.status, code: res.body.error?.code }).toEqual({ field, value, status: 400, code: "validation_error" });
          expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual([field]);
        }
        for (const value of possible) {
          const res = await org.admin.get(`${path}&${field}=${encodeURIComponent(value)}`);
          expect({ field, value, status: res.status }).toEqual({ field, value, status: 200 });
        }
      }
    });
  }
});
