import { signal } from "@preact/signals";
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { bytes } from "../format.ts";
import { clearFinished, type Conflict, parseTags, startUploads, type Upload, uploads } from "../upload.ts";
import { Field } from "./kit.tsx";

const prefix = signal("");
const tagText = signal("");

function start(files: File[], bucketId: string, folder: string, onUploaded: (u: Upload) => void) {
  if (files.length === 0) return;
  startUploads(files, bucketId, { folder, prefix: prefix.value, tags: parseTags(tagText.value), onDone: onUploaded });
}

/**
 * The picker, the options every upload takes (subfolder, tags) and the list of uploads with
 * progress. Files go into the open `folder` (a key prefix: uploading into a new one makes it).
 */
export function UploadPanel({ bucketId, folder = "", onUploaded }: { bucketId: string; folder?: string; onUploaded: (u: Upload) => void }) {
  const mine = uploads.value.filter((u) => u.bucketId === bucketId);
  const finished = mine.filter((u) => u.state.value === "done" || u.state.value === "canceled" || u.state.value === "skipped").length;
  return (
    <section class="card upload-panel" aria-label="Upload">
      <div class="upload-controls">
        <label class="button primary file-button">
          Upload files…
          <input
            type="file"
            multiple
            class="visually-hidden"
            data-testid="file-input"
            onChange={(e) => {
              const input = e.target as HTMLInputElement;
              start([...(input.files ?? [])], bucketId, folder, onUploaded);
              input.value = "";
            }}
          />
        </label>
        <Field label="Tags for these uploads (comma-separated, at most 10)" hideLabel>
          <input value={tagText.value} onInput={(e) => (tagText.value = (e.target as HTMLInputElement).value)} placeholder="Tags for uploads: summer, beach" size={28} />
        </Field>
        <Field label={folder ? `Subfolder of ${folder} (key prefix)` : "Folder (key prefix)"} hideLabel>
          <input value={prefix.value} onInput={(e) => (prefix.value = (e.target as HTMLInputElement).value)} placeholder={folder ? "Subfolder (key prefix)" : "Folder (key prefix)"} size={18} />
        </Field>
        <span class="hint drop-hint">or drop files on the grid</span>
      </div>
      {mine.length > 0 && (
        <>
          <ul class="upload-list" aria-label="Uploads" tabIndex={0}>
            {mine.map((u) => (
              <UploadRow key={u.id} upload={u} />
            ))}
          </ul>
          {finished > 0 && (
            <button type="button" class="small" onClick={clearFinished}>
              Clear finished
            </button>
          )}
        </>
      )}
    </section>
  );
}

const STATE_TEXT: Record<string, string> = {
  queued: "Waiting",
  uploading: "Uploading",
  confirming: "Confirming",
  conflict: "Name exists",
  done: "Done",
  failed: "Failed",
  canceled: "Canceled",
  skipped: "Skipped",
};

function UploadRow({ upload: u }: { upload: Upload }) {
  const state = u.state.value;
  const pct = u.file.size === 0 ? (state === "done" ? 100 : 0) : Math.round((u.loaded.value / u.file.size) * 100);
  return (
    <li class={`upload upload-${state}`} data-key={u.key}>
      <div class="upload-line">
        <span class="upload-name" title={u.target.value}>
          {u.target.value}
        </span>
        <span class="muted">
          {bytes(u.file.size)}
          {u.multipart ? ` · multipart, ${u.partsDone.value}/${u.partCount} parts` : ""}
        </span>
        <span class="upload-state" data-state={state}>
          {STATE_TEXT[state]}
          {state === "uploading" ? ` ${pct}%` : ""}
        </span>
        {(state === "queued" || state === "uploading" || state === "failed" || state === "conflict") && (
          <button type="button" class="small" onClick={() => u.cancel()} aria-label={`Cancel upload of ${u.key}`}>
            Cancel
          </button>
        )}
        {state === "failed" && (
          <button type="button" class="small primary" onClick={() => u.retry()} aria-label={`Retry upload of ${u.key}`}>
            Retry
          </button>
        )}
      </div>
      {state === "conflict" && <ConflictChoice upload={u} />}
      <progress max={100} value={state === "done" ? 100 : pct} aria-label={`${u.key} progress`} />
      {u.error.value && (
        <p class="error-note" role="alert">
          {u.error.value}
        </p>
      )}
    </li>
  );
}

/** "This name exists": replace it, keep both (the file gets a free numbered name) or skip the file; for this file or all. */
function ConflictChoice({ upload: u }: { upload: Upload }) {
  const [all, setAll] = useState(false);
  const answer = (c: Conflict) => u.choose(c, all);
  return (
    <div class="upload-conflict" role="group" aria-label={`${u.target.value} already exists`}>
      <p>
        <strong>{u.target.value}</strong> already exists in this bucket.
      </p>
      <div class="upload-conflict-actions">
        <button type="button" class="small danger" onClick={() => answer("replace")}>
          Replace
        </button>
        <button type="button" class="small primary" onClick={() => answer("keep-both")}>
          Keep both
        </button>
        <button type="button" class="small" onClick={() => answer("skip")}>
          Skip
        </button>
        <label class="check">
          <input type="checkbox" checked={all} onChange={(e) => setAll((e.target as HTMLInputElement).checked)} /> Apply to all
        </label>
      </div>
    </div>
  );
}

/** Files dropped anywhere on the grid are uploaded to this bucket, into the open folder. */
export function DropZone(props: { bucketId: string; folder?: string; onUploaded: (u: Upload) => void; enabled: boolean; children: ComponentChildren }) {
  const [over, setOver] = useState(0);
  if (!props.enabled) return <div class="drop-zone">{props.children}</div>;
  const hasFiles = (e: DragEvent) => [...(e.dataTransfer?.types ?? [])].includes("Files");
  return (
    <div
      class={`drop-zone${over > 0 ? " dragging" : ""}`}
      onDragEnter={(e) => hasFiles(e) && setOver((n) => n + 1)}
      onDragLeave={(e) => hasFiles(e) && setOver((n) => Math.max(0, n - 1))}
      onDragOver={(e) => {
        if (!hasFiles(e)) return;
        e.preventDefault();
        e.dataTransfer!.dropEffect = "copy";
      }}
      onDrop={(e) => {
        if (!hasFiles(e)) return;
        e.preventDefault();
        setOver(0);
        start([...(e.dataTransfer?.files ?? [])], props.bucketId, props.folder ?? "", props.onUploaded);
      }}
    >
      {props.children}
      {over > 0 && (
        <div class="drop-overlay" aria-hidden="true">
          Drop to upload
        </div>
      )}
    </div>
  );
}
