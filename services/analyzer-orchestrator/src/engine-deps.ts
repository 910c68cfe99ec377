import type { Email } from '@trawl/contracts';
import type { CallOptions, PluginInvoker } from '@trawl/plugin-client';
import type {
  AnalyzerCallAnswer,
  ConfigSnapshot,
  EngineDeps,
  EngineEvent,
} from '@trawl/workflow-engine';
import { type AnalyzerCache, analyzerCacheKey, emailHash } from './analyzer-cache.ts';
import type { OrchestratorMetrics } from './metrics.ts';

export interface EngineDepsOptions {
  invoker: PluginInvoker;
  config: ConfigSnapshot;
  /** The email as submitted (its hash keys the analyzer cache). */
  email: Email;
  cache?: AnalyzerCache | undefined;
  metrics?: OrchestratorMetrics | undefined;
  onEvent?: ((e: EngineEvent) => void) | undefined;
}

/**
 * The options of an invoker call made for an engine attempt: `signal` is read from the engine's
 * options only when the callee reads it (the engine makes it on first read), and the call is
 * bounded by the engine (it stops waiting at the attempt's timeout or cancellation), so an
 * in-process invoker adds no timer or listener of its own.
 */
class EngineCallOptions implements CallOptions {
  readonly boundedByCaller = true;
  readonly timeoutMs: number;
  constructor(private readonly o: { readonly signal: AbortSignal; readonly timeoutMs: number }) {
    this.timeoutMs = o.timeoutMs;
  }

  get signal(): AbortSignal {
    return this.o.signal;
  }
}

/**
 * The engine's view of the world for one job: analyzer calls go through the invoker (HTTP or
 * in-process), with the analyzer result cache in front when the analyzer has a `cache_ttl_seconds`.
 */
export function createEngineDeps(o: EngineDepsOptions): EngineDeps {
  const { invoker, config, cache, metrics } = o;
  let hash: string | undefined;
  const hashOf = () => {
    hash ??= emailHash(o.email);
    return hash;
  };
  const observe = metrics
    ? (e: EngineEvent) => {
        if (e.type === 'analyzer_finished') {
          metrics.analyzerCall.observe(
            { analyzer: e.analyzer, status: e.cached ? 'cached' : e.status },
            e.duration_ms / 1000,
          );
          if (e.status !== 'success') {
            metrics.analyzerErrors.inc({
              analyzer: e.analyzer,
              kind: e.status === 'timeout' ? 'timeout' : 'error',
            });
          }
        }
        o.onEvent?.(e);
      }
    : o.onEvent;
  return {
    thresholds: config.thresholds,
    defaultAnalyzerTimeoutMs: config.analyzerTimeoutMs,
    configured: (id) => config.analyzerConfigured(id),
    // a PluginInvoker answers validated results (the HTTP client parses what a plugin sent, the
    // in-process invoker what a built-in returned) and the cache parses what it read back
    validatedAnswers: true,
    ...(observe ? { onEvent: observe } : {}),
    async callAnalyzer(id, email, opts): Promise<AnalyzerCallAnswer> {
      const ttl = cache ? config.analyzerCacheTtl(id) : 0;
      if (!cache || ttl <= 0) return invoker.analyze(id, email, new EngineCallOptions(opts));
      const key = analyzerCacheKey(id, config.analyzerVersion(id), hashOf());
      const hit = await cache.get(key);
      if (hit) return { ...hit, cached: true };
      const answer = await invoker.analyze(id, email, new EngineCallOptions(opts));
      await cache.set(key, answer, ttl);
      return answer;
    },
    callProvider(id, req, opts) {
      return invoker.enrich(id, req, new EngineCallOptions(opts));
    },
  };
}
