import {
  type AnalyzerAnswer,
  type AnalyzerAnswerInput,
  type Email,
  EnrichmentResult,
  type EnrichRequest,
  safeParseAnalyzerAnswer,
  toProblems,
} from '@trawl/contracts';
import type { z } from 'zod';
import { PluginCallError, type PluginKind, pluginLabel } from './errors.ts';
import type { CallOptions, PluginInvoker } from './invoker.ts';

export type InProcessAnalyzer = (
  email: Email,
  ctx: { signal: AbortSignal },
) => Promise<AnalyzerAnswerInput> | AnalyzerAnswerInput;

export type InProcessProvider = (
  req: EnrichRequest,
  ctx: { signal: AbortSignal },
) =>
  | Promise<Omit<EnrichmentResult, 'provider_id'> & { provider_id?: string }>
  | (Omit<EnrichmentResult, 'provider_id'> & { provider_id?: string });

export interface InProcessInvokerOptions {
  analyzers?: Record<string, InProcessAnalyzer>;
  providers?: Record<string, InProcessProvider>;
  /** Ids not registered here go to this invoker (e.g. the HTTP client for third-party plugins). */
  fallback?: PluginInvoker;
  /** Timeout of a call when the caller gives none (default 30000 ms). */
  defaultTimeoutMs?: number;
}

/**
 * Calls built-in analyzers and providers as functions (embedded mode), with the same contract as the
 * HTTP client: per-call timeout and cancellation, answers validated with zod, PluginCallError on
 * failure. The function receives an AbortSignal; one that ignores it is abandoned at the timeout.
 */
export function createInProcessInvoker(opts: InProcessInvokerOptions): PluginInvoker {
  const analyzers = new Map(Object.entries(opts.analyzers ?? {}));
  const providers = new Map(Object.entries(opts.providers ?? {}));
  const defaultTimeoutMs = opts.defaultTimeoutMs ?? 30_000;

  async function run<T>(
    kind: PluginKind,
    id: string,
    o: CallOptions | undefined,
    fn: (signal: AbortSignal) => Promise<unknown> | unknown,
    validate: (v: unknown) => z.ZodSafeParseResult<T>,
    fill?: (v: unknown) => unknown,
  ): Promise<T> {
    const label = pluginLabel(kind, id);
    const outer = o?.signal;
    if (outer?.aborted) throw new PluginCallError('aborted', kind, id, `${label}: call cancelled`);
    const timeoutMs = o?.timeoutMs ?? defaultTimeoutMs;
    const ac = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        ac.abort();
        reject(
          new PluginCallError('timeout', kind, id, `${label} timed out after ${timeoutMs} ms`),
        );
      }, timeoutMs);
      onAbort = () => {
        ac.abort();
        reject(new PluginCallError('aborted', kind, id, `${label}: call cancelled`));
      };
      outer?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      let raw: unknown;
      try {
        raw = await Promise.race([Promise.resolve().then(() => fn(ac.signal)), guard]);
      } catch (e) {
        if (e instanceof PluginCallError) throw e;
        const msg = e instanceof Error ? e.message : String(e);
        throw new PluginCallError('status', kind, id, `${label} failed: ${msg}`, {
          statusCode: 500,
          cause: e,
        });
      }
      const r = validate(fill ? fill(raw) : raw);
      if (r.success) return r.data;
      const detail = toProblems(r.error)
        .slice(0, 5)
        .map((p) => `${p.path || '/'}: ${p.message}`)
        .join('; ');
      throw new PluginCallError(
        'invalidAnswer',
        kind,
        id,
        `${label} answered an invalid result: ${detail}`,
      );
    } finally {
      clearTimeout(timer);
      if (onAbort) outer?.removeEventListener('abort', onAbort);
    }
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
        (signal) => fn(email, { signal }),
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
        (signal) => fn(req, { signal }),
        (v) => EnrichmentResult.safeParse(v),
        (v) =>
          v && typeof v === 'object' && !('provider_id' in v) ? { provider_id: id, ...v } : v,
      );
    },
  };
}
