import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api.ts';

export function Page(props: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  useEffect(() => {
    document.title = `${props.title} · Trawl`;
  }, [props.title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title">{props.title}</h1>
        {props.actions ? <div class="page-actions">{props.actions}</div> : null}
      </header>
      {props.children}
    </section>
  );
}

export function Card(props: {
  title: string;
  children: ComponentChildren;
  id?: string;
  /** Spans two columns of a grid. */
  wide?: boolean;
}) {
  const id = props.id ?? `card-${props.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section class={props.wide ? 'card wide' : 'card'} aria-labelledby={id}>
      <h2 id={id}>{props.title}</h2>
      {props.children}
    </section>
  );
}

/** An error of the API as a person reads it; 404 of an endpoint not on this server: "not available". */
export function Problem(props: { error: unknown; what?: string }) {
  const e = props.error;
  if (e instanceof ApiError && e.status === 404 && props.what) {
    return <p class="muted">{props.what} is not available on this server.</p>;
  }
  const msg = e instanceof ApiError ? `${e.message} (${e.code})` : String(e);
  return (
    <div class="alert" role="alert">
      <p>{msg}</p>
      {e instanceof ApiError && e.problems.length > 0 ? (
        <ul>
          {e.problems.map((p) => (
            <li key={p.path + p.message}>
              <code>{p.path || '/'}</code> {p.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function Loading() {
  return (
    <p class="muted" role="status">
      Loading…
    </p>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
  set(v: T): void;
}

/** Loads `fn()` when `key` changes; `reload()` loads again. */
export function useLoad<T>(fn: () => Promise<T>, key: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({
    loading: true,
  });
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...key, n]);
  return {
    data: state.data,
    error: state.error,
    loading: state.loading,
    reload: () => setN((x) => x + 1),
    set: (v: T) => setState({ data: v, loading: false }),
  };
}

export function Verdict(props: { phishing: boolean | undefined; status?: string }) {
  if (props.phishing === undefined) {
    return <span class={`badge badge-${props.status ?? 'queued'}`}>{props.status ?? '—'}</span>;
  }
  return props.phishing ? (
    <span class="badge badge-phish">phishing</span>
  ) : (
    <span class="badge badge-ok">legitimate</span>
  );
}

export function Threat(props: { level: string | undefined }) {
  if (!props.level) return <span class="muted">—</span>;
  return <span class={`badge threat-${props.level}`}>{props.level}</span>;
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function ms(n: number | undefined): string {
  if (n === undefined) return '—';
  return n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(2)} s`;
}

export function pct(n: number | undefined): string {
  return n === undefined ? '—' : `${Math.round(n * 100)}%`;
}
