import {
  type AnalyzerAnswer,
  type AnalyzerAnswerInput,
  type Email,
  EnrichmentResult,
  type EnrichRequest,
  errorText,
  safeParseAnalyzerAnswer,
} from '@trawl/contracts';
import type { z } from 'zod';
import { invalidAnswerError, PluginCallError, type PluginKind, pluginLabel } from './errors.ts';
import type { CallOptions, PluginInvoker } from './invoker.ts';

/** An analyzer called in-process. */
export type InProcessAnalyzer = (
  email: Email,
  ctx: { signal: AbortSignal },
) => Promise<AnalyzerAnswerInput> | AnalyzerAnswerInput;

/** A context provider called in-process. */
export type InProcessProvider = (
  req: EnrichRequest,
  ctx: { signal: AbortSignal },
) =>
  | Promise<Omit<EnrichmentResult, 'provider_id'> & { provider_id?: string }>
  | (Omit<EnrichmentResult, 'provider_id'> & { provider_id?: string });

/** The analyzers and providers an in-process invoker calls. */
export interface InProcessInvokerOptions {
  analyzers?: Record<string, InProcessAnalyzer>;
  providers?: Record<string, InProcessProvider>;
  /** Ids not registered here go to this invoker (e.g. the HTTP client for third-party plugins). */
  fallback?: PluginInvoker;
  /** Timeout of a call when the caller gives none (default 30000 ms). */
  defaultTimeoutMs?: number;
}

/** A never-aborted signal for a callee whose caller gave none (one per call: callees add listeners). */
function idleSignal(): AbortSignal {
  return new AbortController().signal;
}

/**
 * What a callee receives: `signal` is made when the callee first reads it (an AbortController costs
 * about 10 µs on Node 20 and most callees never look), already aborted if the call has been.
 */
class CalleeContext {
  #ac: AbortController | undefined = undefined;
  #aborted = false;

  get signal(): AbortSignal {
    this.#ac ??= new AbortController();
    if (this.#aborted && !this.#ac.signal.aborted) this.#ac.abort();
    return this.#ac.signal;
  }

  abort(): void {
    this.#aborted = true;
    this.#ac?.abort();
  }
}

/** The context of a call its caller bounds: the caller's own signal, read when the callee reads it. */
class BoundedCalleeContext {
  #signal: AbortSignal | undefined = undefined;
  constructor(private readonly o: CallOptions) {}

  get signal(): AbortSignal {
    this.#signal ??= this.o.signal ?? idleSignal();
    return this.#signal;
  }
}

/**
 * Calls built-in analyzers and providers as functions (embedded mode), with the same contract as the
 * HTTP client: per-call timeout and cancellation, answers validated with zod, PluginCallError on
 * failure. The function receives an AbortSignal (made when it first reads it); one that ignores it
 * is abandoned at the timeout. A caller that bounds its calls itself (`boundedByCaller`, the workflow
 * engine) gets neither timer nor listener: the function runs at once and gets the caller's signal.
 */
export function createInProcessInvoker(opts: InProcessInvokerOptions): PluginInvoker {
  const analyzers = new Map(Object.entries(opts.analyzers ?? {}));
  const providers = new Map(Object.entries(opts.providers ?? {}));
  const defaultTimeoutMs = opts.defaultTimeoutMs ?? 30_000;

  function failed(kind: PluginKind, id: string, e: unknown): PluginCallError {
    if (e instanceof PluginCallError) return e;
    const msg = errorText(e);
    return new PluginCallError('status', kind, id, `${pluginLabel(kind, id)} failed: ${msg}`, {
      statusCode: 500,
      cause: e,
    });
  }

  function checked<T>(
    kind: PluginKind,
    id: string,
    raw: unknown,
    validate: (v: unknown) => z.ZodSafeParseResult<T>,
    fill?: (v: unknown) => unknown,
  ): T {
    const r = validate(fill ? fill(raw) : raw);
    if (r.success) return r.data;
    throw invalidAnswerError(kind, id, r.error);
  }

  /** A call bounded by its caller: no timer, no listener, no race; the answer validated. */
  async function runBounded<T>(
    kind: PluginKind,
    id: string,
    o: CallOptions,
    fn: (ctx: { readonly signal: AbortSignal }) => Promise<unknown> | unknown,
    validate: (v: unknown) => z.ZodSafeParseResult<T>,
    fill?: (v: unknown) => unknown,
  ): Promise<T> {
    let raw: unknown;
    try {
      raw = await fn(new BoundedCalleeContext(o));
    } catch (e) {
      throw failed(kind, id, e);
    }
    return checked(kind, id, raw, validate, fill);
  }

  function run<T>(
    kind: PluginKind,
    id: string,
    o: CallOptions | undefined,
    fn: (ctx: { readonly signal: AbortSignal }) => Promise<unknown> | unknown,
    validate: (v: unknown) => z.ZodSafeParseResult<T>,
    fill?: (v: unknown) => unknown,
  ): Promise<T> {
    if (o?.boundedByCaller) return runBounded(kind, id, o, fn, validate, fill);
    const outer = o?.signal;
    if (outer?.aborted) {
      return Promise.reject(
        new PluginCallError('aborted', kind, id, `${pluginLabel(kind, id)}: call cancelled`),
      );
    }
    const timeoutMs = o?.timeoutMs ?? defaultTimeoutMs;
    const ctx = new CalleeContext();
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        if (outer) outer.removeEventListener('abort', onAbort);
        return true;
      };
      const timer = setTimeout(() => {
        if (!settle()) return;
        ctx.abort();
        reject(
          new PluginCallError(
            'timeout',
            kind,
            id,
            `${pluginLabel(kind, id)} timed out after ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      const onAbort = () => {
        if (!settle()) return;
        ctx.abort();
        reject(
          new PluginCallError('aborted', kind, id, `${pluginLabel(kind, id)}: call cancelled`),
        );
      };
      if (outer) outer.addEventListener('abort', onAbort, { once: true });
      Promise.resolve()
        .then(() => fn(ctx))
        .then(
          (raw) => {
            if (!settle()) return;
            try {
              resolve(checked(kind, id, raw, validate, fill));
            } catch (e) {
              reject(e);
            }
          },
          (e: unknown) => {
            if (settle()) reject(failed(kind, id, e));
          },
        );
    });
  }

  return {
    analyze(id, email, o) {
      const fn = analyzers.get(id);
      if (!fn) {
        if (opts.fallback) return opts.fallback.analyze(id, email, o);
        return Promise.reject(
          new PluginCallError('unknown', 'analyzer', id, `analyzer ${id} is not configured`),
        );
      }
      return run<AnalyzerAnswer>(
        'analyzer',
        id,
        o,
        (ctx) => fn(email, ctx),
        safeParseAnalyzerAnswer,
      );
    },
    enrich(id, req, o) {
      const fn = providers.get(id);
      if (!fn) {
        if (opts.fallback) return opts.fallback.enrich(id, req, o);
        return Promise.reject(
          new PluginCallError(
            'unknown',
            'context_provider',
            id,
            `context provider ${id} is not configured`,
          ),
        );
      }
      return run(
        'context_provider',
        id,
        o,
        (ctx) => fn(req, ctx),
        (v) => EnrichmentResult.safeParse(v),
        (v) =>
          v && typeof v === 'object' && !('provider_id' in v) ? { provider_id: id, ...v } : v,
      );
    },
  };
}
