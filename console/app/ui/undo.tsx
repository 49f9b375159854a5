import { signal } from "@preact/signals";
import { useState } from "preact/hooks";
import { describeError } from "../api.ts";

interface Undoable {
  id: number;
  text: string;
  undo: () => Promise<void>;
}

/** The last action that can be taken back (a delete to the trash), offered for a while. */
const current = signal<Undoable | null>(null);
let seq = 0;
const SHOWN_MS = 10_000;

export function offerUndo(text: string, undo: () => Promise<void>): void {
  const id = ++seq;
  current.value = { id, text, undo };
  setTimeout(() => {
    if (current.value?.id === id) current.value = null;
  }, SHOWN_MS);
}

/** The toast with Undo: restoring from the trash what was just deleted. */
export function UndoToast({ onUndone }: { onUndone: () => void }) {
  const u = current.value;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!u) return null;
  return (
    <div class="undo-toast" role="status" aria-live="polite">
      <span>{error ?? u.text}</span>
      <button
        type="button"
        class="small"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            await u.undo();
            current.value = null;
            setError(null);
            onUndone();
          } catch (err) {
            setError(`Undo failed: ${describeError(err)}`);
          } finally {
            setBusy(false);
          }
        }}
      >
        Undo
      </button>
      <button type="button" class="icon-button" aria-label="Dismiss" onClick={() => (current.value = null)}>
        ×
      </button>
    </div>
  );
}
