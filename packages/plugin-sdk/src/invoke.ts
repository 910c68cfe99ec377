import {
  type AnalyzerAnswer,
  type Email,
  EnrichmentResult,
  type EnrichRequest,
  safeParseAnalyzerAnswer,
  TrawlError,
} from '@trawl/contracts';
import type {
  AnalyzerDefinition,
  PluginContext,
  PluginDefinition,
  ProviderDefinition,
} from './define.ts';
import { PluginAbortedError, PluginInvalidAnswerError } from './errors.ts';
import { resolveSettings } from './settings-resolve.ts';

/** The logger a plugin is given. */
export type PluginLog = PluginContext<unknown>['log'];

const silentLog: PluginLog = { info() {}, warn() {} };

/** Options of invoking a plugin directly: its logger. */
export interface InvokeOptions {
  log?: PluginLog;
}

/** Rejects as soon as `signal` aborts, with the signal's reason or a PluginAbortedError. */
function raceAbort<T>(id: string, work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(id, signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(id, signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

function abortReason(id: string, signal: AbortSignal): unknown {
  return signal.reason instanceof TrawlError ? signal.reason : new PluginAbortedError(id);
}

type Issue = { path: PropertyKey[]; message: string };

function describeProblems(issues: Issue[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? `/${i.path.map(String).join('/')}` : '(root)'} ${i.message}`)
    .join('; ');
}

/**
 * Calls a plugin in-process with its context (settings parsed over the schema defaults); rejects
 * with the signal's reason when it aborts first, or with what the plugin threw.
 */
async function callPlugin<A>(
  def: PluginDefinition,
  settings: unknown,
  signal: AbortSignal,
  opts: InvokeOptions,
  call: (ctx: PluginContext<unknown>) => A | Promise<A>,
): Promise<A> {
  const ctx = { settings: resolveSettings(def, settings), signal, log: opts.log ?? silentLog };
  return await raceAbort(
    def.id,
    Promise.resolve().then(() => call(ctx)),
    signal,
  );
}

/** The parsed answer, else a PluginInvalidAnswerError naming its first problems. */
function checked<T>(
  id: string,
  r: { success: true; data: T } | { success: false; error: { issues: Issue[] } },
): T {
  if (!r.success) throw new PluginInvalidAnswerError(id, describeProblems(r.error.issues));
  return r.data;
}

/** An in-process call of a plugin: its definition, what it is asked about, its raw settings. */
type Invoke<D, I, A> = (
  def: D,
  input: I,
  settings: unknown,
  signal: AbortSignal,
  opts?: InvokeOptions,
) => Promise<A>;

/**
 * Runs an analyzer in-process: settings parsed over the schema defaults, the answer validated as
 * an AnalyzerAnswer (summary defaulted). Rejects with PluginInvalidAnswerError when the plugin's
 * answer is malformed, with the signal's reason when it aborts, or with what the plugin threw.
 */
export const invokeAnalyzer: Invoke<AnalyzerDefinition<unknown>, Email, AnalyzerAnswer> = async (
  def,
  email,
  settings,
  signal,
  opts = {},
) => {
  const answer = await callPlugin(def, settings, signal, opts, (ctx) => def.analyze(email, ctx));
  return checked(def.id, safeParseAnalyzerAnswer(answer));
};

/** Runs a context provider in-process; the answer is validated as an EnrichmentResult. */
export const invokeProvider: Invoke<
  ProviderDefinition<unknown>,
  EnrichRequest,
  EnrichmentResult
> = async (def, req, settings, signal, opts = {}) => {
  const answer = await callPlugin(def, settings, signal, opts, (ctx) => def.enrich(req, ctx));
  const candidate =
    answer !== null && typeof answer === 'object' ? { ...answer, provider_id: def.id } : answer;
  return checked(def.id, EnrichmentResult.safeParse(candidate));
};
