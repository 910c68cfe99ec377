/**
 * What the analysis pool sends its worker threads through the platform's worker pool. Plain data
 * only (it travels by structured clone).
 */

/** What a worker receives when it starts (`workerInit()`). */
export interface AnalysisWorkerData {
  /** Raw settings per analyzer id (service.yaml), resolved by each analyzer's schema in the worker. */
  settings: Record<string, unknown>;
  /** Only for the tsx-loaded fallback (no bundle): the module exporting `analyzers`. */
  definitions?: string;
}

/**
 * A batch's shared part: the calls of one email made in the same turn (a parallel stage's
 * analyzers) carry the Email once, without its `analysis_context`, and each distinct
 * analysis_context once (V8's serializer writes a string every time it meets it, so five copies of
 * an Email cost five times its bodies).
 */
export interface AnalysisBatch {
  email: Record<string, unknown>;
  contexts: unknown[];
}

/** One call of a batch: the analyzer id and the index of its context in `contexts`. */
export type AnalysisCall = [id: string, context: number];

/** The name of the error a worker throws when an analyzer's answer does not match the contract. */
export const INVALID_ANSWER = 'InvalidAnalyzerAnswer';
