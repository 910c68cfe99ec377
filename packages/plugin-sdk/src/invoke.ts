import {
  type AnalyzerAnswer,
  type Email,
  EnrichmentResult,
  type EnrichRequest,
  safeParseAnalyzerAnswer,
  TrawlError,
} from '@trawl/contracts';
import type { AnalyzerDefinition, PluginContext, ProviderDefinition } from './define.ts';
import { PluginAbortedError, PluginInvalidAnswerError } from './errors.ts';
import { resolveSettings } from './settings-resolve.ts';

export type PluginLog = PluginContext<unknown>['log'];

const silentLog: PluginLog = { info() {}, warn() {} };

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

function describeProblems(issues: { path: PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? `/${i.path.map(String).join('/')}` : '(root)'} ${i.message}`)
    .join('; ');
}

/**
 * Runs an analyzer in-process: settings parsed over the schema defaults, the answer validated as
 * an AnalyzerAnswer (summary defaulted). Rejects with PluginInvalidAnswerError when the plugin's
 * answer is malformed, with the signal's reason when it aborts, or with what the plugin threw.
 */
export async function invokeAnalyzer(
  def: AnalyzerDefinition<unknown>,
  email: Email,
  settings: unknown,
  signal: AbortSignal,
  opts: InvokeOptions = {},
): Promise<AnalyzerAnswer> {
  const parsed = resolveSettings(def, settings);
  const work = Promise.resolve().then(() =>
    def.analyze(email, { settings: parsed, signal, log: opts.log ?? silentLog }),
  );
  const answer = await raceAbort(def.id, work, signal);
  const r = safeParseAnalyzerAnswer(answer);
  if (!r.success) throw new PluginInvalidAnswerError(def.id, describeProblems(r.error.issues));
  return r.data;
}

/** Runs a context provider in-process; the answer is validated as an EnrichmentResult. */
export async function invokeProvider(
  def: ProviderDefinition<unknown>,
  req: EnrichRequest,
  settings: unknown,
  signal: AbortSignal,
  opts: InvokeOptions = {},
): Promise<EnrichmentResult> {
  const parsed = resolveSettings(def, settings);
  const work = Promise.resolve().then(() =>
    def.enrich(req, { settings: parsed, signal, log: opts.log ?? silentLog }),
  );
  const answer = await raceAbort(def.id, work, signal);
  const candidate =
    answer !== null && typeof answer === 'object' ? { ...answer, provider_id: def.id } : answer;
  const r = EnrichmentResult.safeParse(candidate);
  if (!r.success) throw new PluginInvalidAnswerError(def.id, describeProblems(r.error.issues));
  return r.data;
}
