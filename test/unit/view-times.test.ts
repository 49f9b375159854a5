import { expect, test } from "bun:test";
import { isoTime } from "../../domain/media/view-rows.ts";

/**
 * A listing writes its views' times from PostgreSQL's JSON without a Date; each must be what
 * the object's own answer (through Date) says, to the character.
 */
test("a time from PostgreSQL's JSON is written as Date writes it, in every form", () => {
  const forms = [
    "2026-11-29T20:14:53.123456+00:00",
    "2026-11-29T20:14:53.1239+00:00",
    "2026-11-29T20:14:53.999999+00:00",
    "2026-11-29T20:14:53.12+00:00",
    "2026-11-29T20:14:53.1+00:00",
    "2026-11-29T20:14:53+00:00",
    "0999-01-01T00:00:00.5+00:00",
    // not UTC: through Date
    "2026-11-29T21:14:53.123456+01:00",
    "2026-11-29T20:14:53.123456-03:30",
  ];
  for (const json of forms) expect([json, isoTime(json)]).toEqual([json, new Date(json).toISOString()]);
  // and a spread of instants, as PostgreSQL writes them with microseconds
  for (let i = 0; i < 2_000; i++) {
    const ms = Math.floor(Math.random() * 4e12);
    const micros = String(Math.floor(Math.random() * 1000)).padStart(3, "0");
    const json = new Date(ms).toISOString().replace(/Z$/, `${micros}+00:00`).replace(/\.(\d*?)0+\+/, ".$1+").replace(/\.\+/, "+");
    expect([json, isoTime(json)]).toEqual([json, new Date(json).toISOString()]);
  }
});
