import { useEffect, useRef, useState } from "preact/hooks";
import { call, can, describeError } from "../api.ts";
import { bytes, duration } from "../format.ts";
import { CopyButton, copyText, Field, notify, useAction, useLoad } from "./kit.tsx";
import { KindIcon, type MediaObject } from "./media.tsx";
import type { PdfDocument } from "./pdf.ts";

const ZOOMS = [0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4];
const EXPIRIES = [
  { seconds: 3600, label: "1 hour" },
  { seconds: 86_400, label: "1 day" },
  { seconds: 604_800, label: "7 days" },
];
const RENDER_FORMATS = ["auto", "webp", "avif", "jpeg", "png"];

/**
 * An object at full size, over the page: zoom, the previous and next objects of the listing
 * (arrow keys), PDF pages, video and audio with their facts, a render preview whose signed URL
 * can be copied, and a download link with the expiry chosen. Escape closes it.
 */
export function Viewer(props: { object: MediaObject; position: string; onPrev: (() => void) | null; onNext: (() => void) | null; onClose: () => void }) {
  const o = props.object;
  const dialog = useRef<HTMLDialogElement>(null);
  const [zoom, setZoom] = useState(1);
  const stream = useLoad(() => call<{ url: string }>("media_stream", { id: o.id }).then((r) => r.url), [o.id]);
  useEffect(() => setZoom(1), [o.id]);
  useEffect(() => {
    const d = dialog.current!;
    if (!d.open) d.showModal();
  }, []);
  const zoomBy = (step: number) => setZoom((z) => ZOOMS[Math.max(0, Math.min(ZOOMS.length - 1, ZOOMS.indexOf(z) + step))]!);
  const keys = useRef((_e: KeyboardEvent) => {});
  keys.current = (e: KeyboardEvent) => {
    // Keys typed into the viewer's fields are theirs.
    if (e.defaultPrevented || (e.target as HTMLElement).closest?.("input, select, textarea")) return;
    if (e.key === "ArrowRight" && props.onNext) (e.preventDefault(), props.onNext());
    else if (e.key === "ArrowLeft" && props.onPrev) (e.preventDefault(), props.onPrev());
    else if (e.key === "+" || e.key === "=") (e.preventDefault(), zoomBy(1));
    else if (e.key === "-") (e.preventDefault(), zoomBy(-1));
  };
  // On the window, not the dialog: a button that disables itself while it works drops focus to <body>.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => keys.current(e);
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  const zoomable = o.kind === "image" || o.kind === "pdf";
  return (
    <dialog
      ref={dialog}
      class="viewer"
      aria-label={`Viewer: ${o.fileName}`}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <header class="viewer-head">
        <h2 class="viewer-title">{o.fileName}</h2>
        <span class="muted">{props.position}</span>
        <div class="viewer-tools">
          <button type="button" class="small" disabled={!props.onPrev} onClick={() => props.onPrev?.()} aria-label="Previous object">
            ‹ Previous
          </button>
          <button type="button" class="small" disabled={!props.onNext} onClick={() => props.onNext?.()} aria-label="Next object">
            Next ›
          </button>
          {zoomable && (
            <>
              <button type="button" class="small" onClick={() => zoomBy(-1)} aria-label="Zoom out">
                −
              </button>
              <output class="viewer-zoom" aria-label="Zoom">
                {Math.round(zoom * 100)}%
              </output>
              <button type="button" class="small" onClick={() => zoomBy(1)} aria-label="Zoom in">
                +
              </button>
            </>
          )}
          <button type="button" class="icon-button" aria-label="Close viewer" onClick={props.onClose}>
            ×
          </button>
        </div>
      </header>
      <div class="viewer-body">
        {/* Focusable: a zoomed picture scrolls, and the keyboard must reach it. */}
        <div class="viewer-stage" data-zoom={zoom} tabIndex={0} role="region" aria-label={`${o.fileName} at ${Math.round(zoom * 100)}%`}>
          {stream.error ? (
            <p class="error-note">{describeError(stream.error)}</p>
          ) : !stream.data ? (
            <p class="muted">Loading…</p>
          ) : o.kind === "image" ? (
            <img src={stream.data} alt={o.fileName} class={`viewer-img${zoom === 1 ? " fit" : ""}`} style={zoom === 1 ? undefined : { width: `${zoom * 100}%` }} />
          ) : o.kind === "video" ? (
            <video src={stream.data} controls class="viewer-video" />
          ) : o.kind === "audio" ? (
            <audio src={stream.data} controls class="viewer-audio" />
          ) : o.kind === "pdf" ? (
            <PdfPages url={stream.data} zoom={zoom} />
          ) : (
            <div class="preview-icon">
              <KindIcon kind={o.kind} size={64} />
              <span class="muted">No preview for {o.kind} files: download it.</span>
            </div>
          )}
        </div>
        <aside class="viewer-side" aria-label="About this object">
          <Facts object={o} />
          {can("presign_download") && <CopyLink object={o} />}
          {can("media_render_url") && (o.kind === "image" || o.kind === "pdf" || o.kind === "video") && <RenderPreview object={o} />}
        </aside>
      </div>
    </dialog>
  );
}

function PdfPages({ url, zoom }: { url: string; zoom: number }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [doc, setDoc] = useState<PdfDocument | null>(null);
  const [page, setPage] = useState(1);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    let opened: PdfDocument | null = null;
    setDoc(null);
    setPage(1);
    import("./pdf.ts")
      .then((m) => m.openPdf(url))
      .then((d) => {
        opened = d;
        if (live) setDoc(d);
        else d.close();
      })
      .catch((err) => live && setError(describeError(err)));
    return () => {
      live = false;
      opened?.close();
    };
  }, [url]);
  useEffect(() => {
    if (!doc || !canvas.current) return;
    const c = canvas.current;
    void doc.draw(page, c, zoom * 1.25).then(() => c.setAttribute("data-drawn", String(page)), (err) => setError(describeError(err)));
  }, [doc, page, zoom]);
  if (error) return <p class="error-note">The PDF could not be shown: {error}</p>;
  return (
    <div class="viewer-pdf">
      {doc && (
        <div class="viewer-pdf-pages">
          <button type="button" class="small" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous page
          </button>
          <span aria-live="polite">
            Page {page} of {doc.pages}
          </span>
          <button type="button" class="small" disabled={page >= doc.pages} onClick={() => setPage(page + 1)}>
            Next page
          </button>
        </div>
      )}
      {!doc && <p class="muted">Opening the PDF…</p>}
      <canvas ref={canvas} class={`viewer-canvas${zoom === 1 ? " fit" : ""}`} role="img" aria-label={`Page ${page} of the PDF`} />
    </div>
  );
}

function Facts({ object: o }: { object: MediaObject }) {
  const info = o.info as Record<string, unknown>;
  const rows: [string, string][] = [
    ["Type", o.contentType],
    ["Size", bytes(o.size)],
  ];
  if (typeof info.width === "number" && typeof info.height === "number") rows.push(["Dimensions", `${info.width} × ${info.height}`]);
  const d = duration(info.duration);
  if (d) rows.push(["Duration", d]);
  for (const k of ["pages", "videoCodec", "audioCodec", "codec", "bitrate", "sampleRate", "channels", "frameRate", "fps"]) {
    const v = info[k];
    if (typeof v === "string" || typeof v === "number") rows.push([k, String(v)]);
  }
  return (
    <dl class="facts viewer-facts">
      {rows.map(([k, v]) => [<dt key={`${k}-t`}>{k}</dt>, <dd key={`${k}-d`}>{v}</dd>])}
    </dl>
  );
}

/** A presigned download URL, valid as long as chosen, copied to the clipboard. */
function CopyLink({ object }: { object: MediaObject }) {
  const [expiresIn, setExpiresIn] = useState(86_400);
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => setUrl(null), [object.id]);
  const [copy, copying] = useAction(async () => {
    const r = await call<{ url: string }>("presign_download", { objectId: object.id, expiresIn });
    setUrl(r.url);
    const label = EXPIRIES.find((e) => e.seconds === expiresIn)!.label;
    notify((await copyText(r.url)) ? `Link copied; it works for ${label}` : "The link is below: copy it from there");
  });
  return (
    <section class="viewer-section" aria-label="Share">
      <form class="inline-form compact" onSubmit={(e) => (e.preventDefault(), void copy())}>
        <Field label="Link valid for">
          <select value={String(expiresIn)} onChange={(e) => setExpiresIn(Number((e.target as HTMLSelectElement).value))}>
            {EXPIRIES.map((x) => (
              <option key={x.seconds} value={String(x.seconds)}>
                {x.label}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit" class="small" disabled={copying}>
          Copy link
        </button>
      </form>
      {url && <input class="mono viewer-url" readOnly value={url} aria-label="Download link" />}
    </section>
  );
}

/** A render of the object at another width, format and quality, and its signed URL to copy (for <img> tags). */
function RenderPreview({ object }: { object: MediaObject }) {
  const [width, setWidth] = useState("640");
  const [format, setFormat] = useState("webp");
  const [quality, setQuality] = useState("80");
  const [signed, setSigned] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => setSigned(null), [object.id]);
  const [preview, previewing] = useAction(async () => {
    setFailed(false);
    const r = await call<{ url: string }>("media_render_url", { id: object.id, width: Number(width), format, quality: Number(quality) });
    setSigned(r.url);
  });
  return (
    <section class="viewer-section" aria-label="Transform">
      <h3>Transform</h3>
      <form class="viewer-render-form" onSubmit={(e) => (e.preventDefault(), void preview())}>
        <Field label="Width (px)">
          <input type="number" min={1} max={8192} value={width} onInput={(e) => setWidth((e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="Format">
          <select value={format} onChange={(e) => setFormat((e.target as HTMLSelectElement).value)}>
            {RENDER_FORMATS.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Quality">
          <input type="number" min={1} max={100} value={quality} onInput={(e) => setQuality((e.target as HTMLInputElement).value)} />
        </Field>
        <button type="submit" class="small" disabled={previewing}>
          Preview
        </button>
      </form>
      {signed && (
        <>
          {failed ? (
            <p class="hint">The render is not ready yet (the object is still being processed): preview again in a few seconds.</p>
          ) : (
            <img src={signed} alt={`Render of ${object.fileName}, ${width} px ${format}`} class="viewer-render" onError={() => setFailed(true)} />
          )}
          <p class="viewer-url-line">
            <input class="mono viewer-url" readOnly value={signed} aria-label="Signed render URL" /> <CopyButton text={signed} label="Copy URL" />
          </p>
        </>
      )}
    </section>
  );
}
