import { readFileSync } from 'node:fs';
import type { AnalysisContext, Email, ServiceConfigFile, Workflow } from '@trawl/contracts';
import { parseRawEmail } from '@trawl/mail';
import type { PluginDefinition } from '@trawl/plugin-sdk';
import { type CompiledWorkflow, compileWorkflow, runWorkflow } from '@trawl/workflow-engine';
import { inProcessDeps } from './in-process-invoker.ts';

export type Label = 'phishing' | 'ham';

export interface EvalItem {
  file: string;
  label: Label;
  /** Position of the file within its class (sorted by name), for the even/odd split. */
  index: number;
  path: string;
}

export interface MessageOutcome {
  file: string;
  label: Label;
  index: number;
  predicted: boolean;
  probability: number;
  error?: string;
  /** The message could not be parsed (counted as "not phishing"). */
  parse_failed?: boolean;
  /** analyzer id → its own verdict (is_phishing) */
  analyzers: Record<string, boolean>;
  indicatorTypes: string[];
  indicators: { type: string; value: string }[];
  /** `<analyzer>.<symbol>` reported by the analyzers (analyzer_details.symbols), for fitting. */
  symbols: string[];
}

function summarizeContext(
  ctx: AnalysisContext,
): Pick<MessageOutcome, 'analyzers' | 'indicatorTypes' | 'indicators' | 'symbols'> {
  const analyzers: Record<string, boolean> = {};
  const types = new Set<string>();
  const symbols = new Set<string>();
  const indicators: { type: string; value: string }[] = [];
  for (const stage of Object.values(ctx)) {
    for (const [id, r] of Object.entries(stage.analyzers)) {
      if (r.status !== 'success') continue;
      analyzers[id] = r.is_phishing;
      const syms = r.analyzer_details?.symbols;
      if (Array.isArray(syms)) for (const s of syms) symbols.add(`${id}.${String(s)}`);
      if (id === 'scorer') continue; // it repeats the others' indicators
      for (const i of r.indicators) {
        types.add(i.type);
        if (indicators.length < 40) indicators.push({ type: i.type, value: i.value });
      }
    }
  }
  return { analyzers, indicatorTypes: [...types], indicators, symbols: [...symbols] };
}

/** The SMTP envelope the eval pretends every message was delivered with. */
export const EVAL_ENVELOPE = { to: ['mailbox@eval.invalid'] } as const;

export interface EvalRunner {
  run(item: EvalItem): Promise<MessageOutcome>;
}

/** Parses and runs single messages through one workflow, in this thread. */
export function evalRunner(
  workflow: Workflow,
  service: ServiceConfigFile,
  registry: Record<string, PluginDefinition>,
): EvalRunner {
  const compiled: CompiledWorkflow = compileWorkflow(workflow);
  const deps = {
    ...inProcessDeps(registry, service),
    thresholds: service.verdict.thresholds,
    defaultAnalyzerTimeoutMs: service.analyzer.timeout_ms,
  };
  return {
    async run(it) {
      const base = {
        file: it.file,
        label: it.label,
        index: it.index,
        analyzers: {},
        indicatorTypes: [],
        indicators: [],
        symbols: [],
      };
      let email: Email;
      try {
        // a mailbox always knows where it delivered a message: used when no header names a recipient
        email = await parseRawEmail(readFileSync(it.path), { envelope: EVAL_ENVELOPE });
      } catch (err) {
        const error = (err as Error).message.slice(0, 300);
        return { ...base, predicted: false, probability: 0, error, parse_failed: true };
      }
      const out = await runWorkflow(compiled, email, deps);
      if (out.status === 'completed') {
        const p = out.result.is_phishing ? out.result.confidence : 1 - out.result.confidence;
        return {
          ...base,
          predicted: out.result.is_phishing,
          probability: p,
          ...summarizeContext(out.context),
        };
      }
      return {
        ...base,
        predicted: false,
        probability: 0,
        error: out.error.message,
        ...summarizeContext(out.context),
      };
    },
  };
}
