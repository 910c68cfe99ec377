import {
  AnalyzerAnswer,
  type AnalyzerAnswerInput,
  type Email,
  type EnrichmentResult,
  Workflow,
  type WorkflowInput,
} from '@trawl/contracts';
import {
  type CompiledWorkflow,
  compileWorkflow,
  type EngineDeps,
  type EngineEvent,
} from '../../../src/index.ts';
import { FakeClock } from './fake-clock.ts';

export const email: Email = {
  headers: {
    subject: 'Your account is locked',
    sender: 'alerts@examp1e-bank.test',
    recipients: ['user@example.org'],
    date: '2024-05-01T09:30:00Z',
  },
  body_text: 'Click here to verify your account',
  analysis_context: {},
};

export function compile(w: WorkflowInput): CompiledWorkflow {
  return compileWorkflow(Workflow.parse(w));
}

export function answer(
  isPhishing: boolean,
  confidence: number,
  extra: Partial<AnalyzerAnswerInput> = {},
): AnalyzerAnswer {
  return AnalyzerAnswer.parse({ is_phishing: isPhishing, confidence, indicators: [], ...extra });
}

/** What one attempt of a fake analyzer does. */
export type Behaviour =
  | { ms?: number; answer: unknown }
  | { ms?: number; error: string | Error }
  | { hang: true; ignoreAbort?: boolean };

interface CallRecord {
  id: string;
  stage: string;
  attempt: number;
  start: number;
  end?: number;
  aborted?: boolean;
  context: Email['analysis_context'];
  timeoutMs: number;
}

export interface Harness {
  clock: FakeClock;
  deps: EngineDeps;
  calls: CallRecord[];
  providerCalls: CallRecord[];
  events: Array<EngineEvent & { at: number }>;
  maxInFlight: () => number;
}

type Script = (attempt: number, stage: string) => Behaviour;

/** Fake analyzers and providers on a fake clock; `script[id]` says what each attempt does. */
export function harness(
  script: Record<string, Behaviour | Script>,
  providers: Record<string, Behaviour | Script> = {},
  extra: Partial<EngineDeps> = {},
): Harness {
  const clock = new FakeClock();
  const calls: CallRecord[] = [];
  const providerCalls: CallRecord[] = [];
  const events: Harness['events'] = [];
  let inFlight = 0;
  let maxInFlight = 0;

  const perform = (
    b: Behaviour,
    signal: AbortSignal,
    rec: CallRecord,
    counted: boolean,
  ): Promise<unknown> => {
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      rec.end = clock.now();
      if (counted) inFlight--;
    };
    signal.addEventListener(
      'abort',
      () => {
        rec.aborted = true;
        end();
      },
      { once: true },
    );
    if ('hang' in b) return new Promise(() => {});
    return new Promise((resolve, reject) => {
      const h = clock.setTimeout(() => {
        end();
        if ('answer' in b) resolve(b.answer);
        else reject(typeof b.error === 'string' ? new Error(b.error) : b.error);
      }, b.ms ?? 0);
      signal.addEventListener('abort', () => {
        clock.clearTimeout(h);
        reject(new Error('aborted'));
      });
    });
  };

  const pick = (s: Behaviour | Script | undefined, attempt: number, stage: string): Behaviour => {
    if (s === undefined) return { answer: answer(false, 0.9) };
    return typeof s === 'function' ? s(attempt, stage) : s;
  };

  const deps: EngineDeps = {
    clock,
    random: () => 0.5,
    onEvent: (e) => events.push({ ...e, at: clock.now() }),
    callAnalyzer(id, mail, o) {
      const rec: CallRecord = {
        id,
        stage: o.stage,
        attempt: o.attempt,
        start: clock.now(),
        context: mail.analysis_context,
        timeoutMs: o.timeoutMs,
      };
      calls.push(rec);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return perform(pick(script[id], o.attempt, o.stage), o.signal, rec, true) as never;
    },
    callProvider(id, req, o) {
      const rec: CallRecord = {
        id,
        stage: req.stage,
        attempt: o.attempt,
        start: clock.now(),
        context: req.email.analysis_context,
        timeoutMs: o.timeoutMs,
      };
      providerCalls.push(rec);
      const b = pick(providers[id] ?? { answer: { provider_id: id, data: { id } } }, 1, req.stage);
      return perform(b, o.signal, rec, false) as Promise<EnrichmentResult>;
    },
    ...extra,
  };
  return { clock, deps, calls, providerCalls, events, maxInFlight: () => maxInFlight };
}
