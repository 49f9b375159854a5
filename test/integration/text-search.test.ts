import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { backfillRuns, mediaText } from "../../db/schema/index.ts";
import { eventually } from "../support/eventually.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { textImage, textPdf } from "../support/text-files.ts";
import { upload } from "../support/upload.ts";

let server: TestServer;
let org: TestOrg;
let bucket: string;

beforeAll(async () => {
  server = await startServer({ env: { WORKER_BACKOFF_MS: "50" } });
  org = await newOrg(server);
  bucket = (await org.admin.post("/api/buckets", { name: "documents" })).body.id;
});
afterAll(async () => {
  await server.stop();
  const { stopOcr } = await import("../../worker/derivatives/ocr.ts");
  await stopOcr();
});

const db = () => server.services.deps.db;
const search = (q: string, api = org.admin) => api.get(`/api/search?q=${encodeURIComponent(q)}`);
/** Text is read by a job after the upload: waits until the search finds `n` objects. */
const found = (q: string, n = 1, api = org.admin) =>
  eventually(async () => {
    const res = await search(q, api);
    return res.body.total === n ? res.body : undefined;
  }, { what: `a search for ${q} to find ${n}` });
/** Waits until the worker recorded the object's text (OCR takes a second or two). */
const textRead = (id: string) =>
  eventually(async () => ((await db().select().from(mediaText).where(eq(mediaText.objectId, id))).length ? true : undefined), { what: `the text of ${id}` });

describe("text inside files", () => {
  test("a word only on page 3 of a PDF finds it, naming page 3, with the word marked", async () => {
    const pdf = textPdf([["Invoice 2026-11", "Dear customer"], ["Terms and conditions"], ["Total due to Zanzibarco", "Thank you"]]);
    const obj = await upload(org.admin, bucket, "inbox/invoice.pdf", pdf, { contentType: "application/pdf" });
    const body = await found("zanzibarco");
    expect(body.media.map((m: { id: string }) => m.id)).toEqual([obj.id]);
    expect(body.matches).toEqual([{ id: obj.id, in: ["text"], page: 3, snippet: expect.stringContaining("<mark>Zanzibarco</mark>") }]);
    // Facets and the other fields are as they were.
    expect(body.facets.kinds).toEqual([{ kind: "pdf", count: 1 }]);
    expect(body.totalRelation).toBe("eq");
  });

  test("the file name outranks the text: a name match comes first and says so", async () => {
    await upload(org.admin, bucket, "notes/walrus.txt", "nothing to see", { contentType: "text/plain" });
    await upload(org.admin, bucket, "notes/other.md", "# Minutes\nThe walrus was discussed.\nIf 3 < 4 then <b>heron</b> & co", { contentType: "text/markdown" });
    const body = await found("walrus", 2);
    expect(body.media.map((m: { key: string }) => m.key)).toEqual(["notes/walrus.txt", "notes/other.md"]);
    expect(body.matches[0].in).toEqual(["name"]);
    expect(body.matches[1]).toMatchObject({ in: ["text"], page: null });
    expect(body.matches[1].snippet).toContain("<mark>walrus</mark>");
    // The file's own markup is escaped; only the marks are tags.
    const marked = (await found("heron")).matches[0].snippet;
    expect(marked).toContain("3 &lt; 4");
    expect(marked.replace(/<\/?mark>/g, "")).not.toContain("<");
  });

  test("binary bytes named .txt give no text", async () => {
    const obj = await upload(org.admin, bucket, "blob.txt", new Uint8Array([0, 1, 2, 0, 255, 0, 7, 0]), { contentType: "text/plain" });
    await textRead(obj.id);
    const rows = await db().select().from(mediaText).where(eq(mediaText.objectId, obj.id));
    expect(rows.map((r) => r.text)).toEqual([""]);
  });
});

describe("OCR", () => {
  test("off by default: an image's words are not found; the tool reads them, and then they are", async () => {
    const settings = await org.admin.get("/api/media-settings");
    expect(settings.body).toMatchObject({ ocrOnUpload: false, ocrLanguages: ["eng"], ocrLanguagesInstalled: expect.arrayContaining(["eng"]) });
    const obj = await upload(org.admin, bucket, "screens/capture.png", await textImage(["Pelican error", "code 4711"]), { contentType: "image/png" });
    // The thumbnail job has run (the object is settled) and no text job was queued.
    await eventually(async () => ((await org.admin.get(`/api/media/${obj.id}`)).body.thumbnail?.state === "ready" ? true : undefined));
    expect((await search("pelican")).body.total).toBe(0);
    expect((await db().select().from(mediaText).where(eq(mediaText.objectId, obj.id))).length).toBe(0);

    const res = await org.admin.post("/api/search/text-extract", { id: obj.id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ scope: "object", resumed: false });
    const body = await found("pelican");
    expect(body.matches[0]).toMatchObject({ id: obj.id, in: ["text"], page: null });
    expect(body.matches[0].snippet).toContain("<mark>Pelican</mark>");
  });

  test("with the setting on, an uploaded image is read on upload", async () => {
    const put = await org.admin.put("/api/media-settings", { ocrOnUpload: true });
    expect(put.body).toMatchObject({ ocrOnUpload: true });
    expect(put.body).toMatchObject({ ocrOnUpload: true, stripLocation: true });
    await upload(org.admin, bucket, "screens/second.png", await textImage(["Flamingo invoice"]), { contentType: "image/png" });
    await found("flamingo");
    await org.admin.put("/api/media-settings", { ocrOnUpload: false });
  });

  test("a language without an installed model is refused", async () => {
    const res = await org.admin.put("/api/media-settings", { ocrLanguages: ["xyz"] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
  });

  test("another organization's object is 404 and its text is never found", async () => {
    const other = await newOrg(server);
    const mine = (await search("zanzibarco")).body.media[0];
    expect((await other.admin.post("/api/search/text-extract", { id: mine.id })).status).toBe(404);
    expect((await search("zanzibarco", other.admin)).body.total).toBe(0);
  });
});

describe("backfill", () => {
  test("objects stored before are read by a resumable per-organization run", async () => {
    const fresh = await newOrg(server);
    const b = (await fresh.admin.post("/api/buckets", { name: "old" })).body.id;
    const a = await upload(fresh.admin, b, "a.txt", "ancient ocelot", { contentType: "text/plain" });
    await upload(fresh.admin, b, "b.pdf", textPdf([["ocelot report"]]), { contentType: "application/pdf" });
    await found("ocelot", 2, fresh.admin);
    // As if stored before text was read: no text rows, and search rows rewritten without them.
    await db().delete(mediaText).where(eq(mediaText.orgId, fresh.orgId));
    const { touchSearch } = await import("../../domain/search/index-rows.ts");
    await db().transaction((tx) => touchSearch(tx, server.services.deps, fresh.orgId, [a.id]));
    expect((await search("ancient", fresh.admin)).body.total).toBe(0);

    const res = await fresh.admin.post("/api/search/text-extract", {});
    expect(res.body).toEqual({ scope: "organization", resumed: false });
    await found("ancient", 1, fresh.admin);
    const run = await eventually(async () => {
      const [r] = await db().select().from(backfillRuns).where(eq(backfillRuns.orgId, fresh.orgId));
      return r?.finishedAt ? r : undefined;
    });
    expect(run.cursor).not.toBeNull();
    // Again: starts over, queues nothing new (everything has its text), finds the same.
    expect((await fresh.admin.post("/api/search/text-extract", {})).body.resumed).toBe(false);
    await eventually(async () => {
      const [r] = await db().select().from(backfillRuns).where(eq(backfillRuns.orgId, fresh.orgId));
      return r?.finishedAt ? r : undefined;
    });
    expect((await search("ocelot", fresh.admin)).body.total).toBe(2);
  });
  test("a run that stopped resumes at its cursor; a finished one starts over", async () => {
    const fresh = await newOrg(server);
    const b = (await fresh.admin.post("/api/buckets", { name: "resume" })).body.id;
    const objects = [];
    for (const word of ["alpaca", "bison", "caribou"]) objects.push(await upload(fresh.admin, b, `${word}.txt`, `the ${word} file`, { contentType: "text/plain" }));
    for (const word of ["alpaca", "bison", "caribou"]) await found(word, 1, fresh.admin);
    const ids = objects.map((o) => o.id).sort();
    const { touchSearch } = await import("../../domain/search/index-rows.ts");
    const forget = async () => {
      await db().delete(mediaText).where(eq(mediaText.orgId, fresh.orgId));
      await db().transaction((tx) => touchSearch(tx, server.services.deps, fresh.orgId, ids));
    };
    await forget();
    // A run that stopped after the first object (in id order): its cursor is kept, it is not finished.
    await db().insert(backfillRuns).values({ orgId: fresh.orgId, kind: "text:all:ocr", cursor: ids[0]!, processed: 1 });
    expect((await fresh.admin.post("/api/search/text-extract", {})).body).toEqual({ scope: "organization", resumed: true });
    const finished = () =>
      eventually(async () => {
        const [r] = await db().select().from(backfillRuns).where(eq(backfillRuns.orgId, fresh.orgId));
        return r?.finishedAt ? r : undefined;
      });
    await finished();
    const read = async () => (await db().select({ id: mediaText.objectId }).from(mediaText).where(eq(mediaText.orgId, fresh.orgId))).map((r) => r.id).sort();
    // The two after the cursor are read; the one before it was done by the stopped run (here: forgotten on purpose).
    await eventually(async () => ((await read()).length === 2 ? true : undefined), { what: "the objects after the cursor to be read" });
    expect(await read()).toEqual(ids.slice(1));
    // Finished: the next start begins again at the first object, and only it had no text.
    expect((await fresh.admin.post("/api/search/text-extract", {})).body.resumed).toBe(false);
    await eventually(async () => ((await read()).length === 3 ? true : undefined), { what: "every object to be read" });
  });
});
