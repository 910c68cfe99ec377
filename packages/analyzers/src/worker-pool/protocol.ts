/**
 * Messages between the analysis pool (main thread) and its worker threads. Plain data only (they
 * travel by structured clone).
 */

/** One call of a batch: its sequence number, analyzer id, index into `contexts`, deadline. */
export type BatchCall = [seq: number, id: string, context: number, deadlineAt: number];

/** What a worker receives when it starts (`workerData`). */
export interface WorkerInit {
  /** Int32Array over it: [0] the seq of the call the worker is running, 0 when between calls. */
  state: SharedArrayBuffer;
  /** Raw settings per analyzer id (service.yaml), resolved by each analyzer's schema in the worker. */
  settings: Record<string, unknown>;
  /** Only for the tsx-loaded fallback (no bundle): the module exporting `analyzers`. */
  definitions?: string;
}

export type MainMessage =
  | { t: 'settings'; settings: Record<string, unknown> }
  /**
   * The calls of one email made in the same turn (a parallel stage's analyzers): the Email once,
   * without its `analysis_context`, and each distinct analysis_context once (V8's serializer writes a
   * string every time it meets it, so five copies of an Email cost five times its bodies).
   * `deadlineAt` is epoch ms (Date.now()); a call already past it when its turn comes is not run.
   */
  | { t: 'batch'; email: Record<string, unknown>; contexts: unknown[]; calls: BatchCall[] };

export const ResultKind = {
  ok: 0,
  /** The analyzer threw: payload is the message. */
  failed: 1,
  /** The answer does not match the contract: payload is the message. */
  invalid: 2,
  /** Not run: its deadline had passed when its turn came. */
  expired: 3,
} as const;
export type ResultKind = (typeof ResultKind)[keyof typeof ResultKind];

/** One call's result: its seq, kind and payload. */
export type CallResult = [seq: number, kind: ResultKind, payload: unknown];

/** The results of a batch, posted once when the batch ends (each post wakes the main thread). */
export type WorkerMessage = { t: 'ready' } | { t: 'results'; results: CallResult[] };
