import { signal } from "@preact/signals";
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { describeError } from "../api.ts";
import { BASE, navigate } from "../router.ts";

/** A link inside the console: the app routes it without reloading the page. */
export function Link(props: { to: string; children: ComponentChildren; class?: string; "aria-current"?: "page" | undefined; "aria-label"?: string }) {
  const { to, children, ...rest } = props;
  return (
    <a
      {...rest}
      href={`${BASE}${to}`}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

// --- Notices -----------------------------------------------------------------------------

export interface Toast {
  id: number;
  text: string;
  kind: "ok" | "error";
}
export const toasts = signal<Toast[]>([]);
let toastId = 0;

export function notify(text: string, kind: Toast["kind"] = "ok"): void {
  const id = ++toastId;
  toasts.value = [...toasts.value, { id, text, kind }];
  setTimeout(() => (toasts.value = toasts.value.filter((t) => t.id !== id)), kind === "error" ? 9000 : 4000);
}

export function notifyError(err: unknown): void {
  notify(describeError(err), "error");
}

export function Toasts() {
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.value.map((t) => (
        <div key={t.id} class={`toast toast-${t.kind}`}>
          {t.text}
        </div>
      ))}
    </div>
  );
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="error-note" role="alert">
      {describeError(error)}
    </p>
  );
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return (
    <p class="loading" role="status">
      <span class="spinner" aria-hidden="true" /> {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

// --- Data loading ------------------------------------------------------------------------

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  set: (value: T) => void;
}

/** Runs `load` when `deps` change (and on reload), keeping the last good value while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error) => live && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1), set: (data: T) => setState({ data, error: null, loading: false }) };
}

/**
 * A form's submit handler: the action's error is kept for an <ErrorNote> beside the form (a
 * form's mistakes belong next to its fields, not in a passing notice) and cleared on the next try.
 */
export function useSubmit(action: () => Promise<unknown>): [(e: Event) => Promise<void>, unknown, () => void] {
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(err);
    }
  };
  return [submit, error, () => setError(null)];
}

/** A loaded list in its three states: its error, a spinner until the first answer, "empty", or the rows. */
export function Listed<T>(props: { rows: T[] | undefined; error: unknown; empty: ComponentChildren; loading?: string; children: (rows: T[]) => ComponentChildren }) {
  const { rows } = props;
  return (
    <>
      <ErrorNote error={props.error} />
      {!rows ? <Loading what={props.loading} /> : rows.length === 0 ? <Empty>{props.empty}</Empty> : props.children(rows)}
    </>
  );
}

/** A table's header row; `actions` adds the unlabelled column of row buttons (named for screen readers). */
export function TableHead({ columns, actions }: { columns: string[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col">
            {c}
          </th>
        ))}
        {actions && (
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}

/** Wraps an action: busy while it runs, errors become a notice. */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<unknown>): [(...args: A) => Promise<void>, boolean] {
  const [busy, setBusy] = useState(false);
  const run = async (...args: A) => {
    setBusy(true);
    try {
      await action(...args);
    } catch (err) {
      notifyError(err);
    } finally {
      setBusy(false);
    }
  };
  return [run, busy];
}

// --- Dialogs -----------------------------------------------------------------------------

/** A modal <dialog>: the browser keeps focus inside and Escape closes it. */
export function Dialog(props: { title: string; open: boolean; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} class={props.wide ? "dialog wide" : "dialog"} aria-labelledby="dialog-title" onClose={props.onClose}>
      {props.open && (
        <>
          <header class="dialog-head">
            <h2 id="dialog-title">{props.title}</h2>
            <button type="button" class="icon-button" aria-label="Close" onClick={props.onClose}>
              ×
            </button>
          </header>
          <div class="dialog-body">{props.children}</div>
        </>
      )}
    </dialog>
  );
}

/** A button that asks first: for deletions and other things that cannot be undone. */
export function ConfirmButton(props: {
  label: string;
  question: string;
  detail?: ComponentChildren;
  confirmLabel?: string;
  onConfirm: () => Promise<unknown>;
  class?: string;
  disabled?: boolean;
  ariaLabel?: string;
}) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await props.onConfirm();
      setOpen(false);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class={props.class ?? "danger"} disabled={props.disabled} aria-label={props.ariaLabel} onClick={() => setOpen(true)}>
        {props.label}
      </button>
      <Dialog title={props.question} open={open} onClose={() => setOpen(false)}>
        {props.detail && <div class="confirm-detail">{props.detail}</div>}
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" onClick={() => setOpen(false)}>
            Cancel
          </button>
          <button type="button" class="danger" disabled={busy} onClick={confirm}>
            {props.confirmLabel ?? props.label}
          </button>
        </div>
      </Dialog>
    </>
  );
}

// --- Small pieces ------------------------------------------------------------------------

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API outside secure contexts: select a temporary field and copy that.
    const area = document.createElement("textarea");
    area.value = text;
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="small"
      onClick={async () => {
        setDone(await copyText(text));
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? "Copied" : label}
    </button>
  );
}

export function Code({ text, label }: { text: string; label: string }) {
  return (
    <figure class="code">
      <figcaption>
        <span>{label}</span> <CopyButton text={text} />
      </figcaption>
      <pre tabIndex={0} aria-label={label}>
        <code>{text}</code>
      </pre>
    </figure>
  );
}

export function Chip(props: { children: ComponentChildren; onRemove?: () => void; removeLabel?: string; tone?: string }) {
  return (
    <span class={`chip${props.tone ? ` chip-${props.tone}` : ""}`}>
      {props.children}
      {props.onRemove && (
        <button type="button" class="chip-remove" aria-label={props.removeLabel ?? "Remove"} onClick={props.onRemove}>
          ×
        </button>
      )}
    </span>
  );
}

export function PageHead(props: { title: string; children?: ComponentChildren; sub?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · Media console`;
  }, [props.title]);
  // A page mounts on each navigation (sign-in, a link, back/forward): focus goes to its heading,
  // so a screen reader announces where the person is and Tab starts from the page, not <body>.
  // A dialog opened meanwhile keeps its focus.
  useEffect(() => {
    if (!document.querySelector("dialog[open]")) heading.current?.focus();
  }, []);
  return (
    <header class="page-head">
      <div>
        <h1 ref={heading} tabIndex={-1}>
          {props.title}
        </h1>
        {props.sub && <p class="sub">{props.sub}</p>}
      </div>
      {props.children && <div class="page-actions">{props.children}</div>}
    </header>
  );
}

export function Field(props: { label: string; children: ComponentChildren; hint?: string; id?: string; hideLabel?: boolean }) {
  return (
    <label class="field">
      <span class={props.hideLabel ? "visually-hidden" : "field-label"}>{props.label}</span>
      {props.children}
      {props.hint && <span class="hint">{props.hint}</span>}
    </label>
  );
}

export { navigate };
