import type { AnalyzerAnswer, Email, EnrichmentResult, EnrichRequest } from '@trawl/contracts';

/**
 * Options of one plugin call. Extra fields (stage, attempt) are accepted and ignored. `signal` may be
 * a getter of the object's class that makes the signal on first read (the orchestrator's are): read
 * it from the options themselves, or pass them on whole; a spread copy would lose it.
 */
export interface CallOptions {
  /** Cancels the call (the workflow deadline, a `fail` strategy, shutdown). */
  signal?: AbortSignal | undefined;
  /** Bounds this attempt; default: the invoker's default timeout. */
  timeoutMs?: number | undefined;
  /**
   * The caller bounds the call itself: it stops waiting when `timeoutMs` passes or `signal` aborts,
   * whatever the invoker answers later (the workflow engine's attempts do). An in-process invoker
   * then arms no timer and watches no signal of its own, and reads `signal` only when the callee
   * does. The HTTP client ignores it.
   */
  boundedByCaller?: boolean | undefined;
}

/**
 * What the orchestrator calls analyzers and context providers through: the HTTP plugin client, an
 * in-process invoker (embedded mode), or any object with this shape.
 * Both methods answer a validated result or throw (a PluginCallError for the built-in invokers).
 */
export interface PluginInvoker {
  analyze(id: string, email: Email, opts?: CallOptions): Promise<AnalyzerAnswer>;
  enrich(id: string, req: EnrichRequest, opts?: CallOptions): Promise<EnrichmentResult>;
}

/** Alias named after its use in embedded mode. */
export type InProcessInvoker = PluginInvoker;
