import { readFileSync } from 'node:fs';
import type { AnalysisContext, Email, ServiceConfigFile, Workflow } from '@trawl/contracts';
import { parseRawEmail } from '@trawl/mail';
import type { PluginDefinition } from '@trawl/plugin-sdk';
import { type CompiledWorkflow, compileWorkflow, runWorkflow } from '@trawl/workflow-engine';
import { viewOf } from '../shared/view.ts';
import { type Forgery, forge } from './forgeries.ts';
import { inProcessDeps } from './in-process-invoker.ts';

export type Label = 'phishing' | 'ham';

export interface EvalItem {
  file: string;
  label: Label;
  /** Position of the file within its class (sorted by name), for the even/odd split. */
  index: number;
  path: string;
  /** Run the message with this forgery applied (eval/forgeries.ts). */
  forgery?: Forgery;
}

export interface MessageOutcome {
  file: string;
  /** The forgery the message was run with, when any. */
  forgery?: Forgery;
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
  /** `<analyzer>.<symbol>` → the score its analyzer declared for it (analyzer_details.scores). */
  scores: Record<string, number>;
  /** `<analyzer>.<symbol>` → its group (analyzer_details.groups), when it has one. */
  groups: Record<string, string>;
  /** The language the analyzers read the message in (`email.language`, else the guess; '' unknown). */
  language?: string;
}

function summarizeContext(
  ctx: AnalysisContext,
): Pick<
  MessageOutcome,
  'analyzers' | 'indicatorTypes' | 'indicators' | 'symbols' | 'scores' | 'groups'
> {
  const analyzers: Record<string, boolean> = {};
  const types = new Set<string>();
  const symbols = new Set<string>();
  const indicators: { type: string; value: string }[] = [];
  const scores: Record<string, number> = {};
  const groups: Record<string, string> = {};
  for (const stage of Object.values(ctx)) {
    for (const [id, r] of Object.entries(stage.analyzers)) {
      if (r.status !== 'success') continue;
      analyzers[id] = r.is_phishing;
      const syms = r.analyzer_details?.symbols;
      if (Array.isArray(syms)) {
        const sc = r.analyzer_details?.scores as Record<string, unknown> | undefined;
        const gr = r.analyzer_details?.groups as Record<string, unknown> | undefined;
        for (const s of syms) {
          const key = `${id}.${String(s)}`;
          symbols.add(key);
          const score = sc?.[String(s)];
          if (typeof score === 'number') scores[key] = score;
          const group = gr?.[String(s)];
          if (typeof group === 'string') groups[key] = group;
        }
      }
      if (id === 'scorer') continue; // it repeats the others' indicators
      for (const i of r.indicators) {
        types.add(i.type);
        if (indicators.length < 40) indicators.push({ type: i.type, value: i.value });
      }
    }
  }
  return {
    analyzers,
    indicatorTypes: [...types],
    indicators,
    symbols: [...symbols],
    scores,
    groups,
  };
}

/** The SMTP envelope the eval pretends every message was delivered with. */
export const EVAL_ENVELOPE = { to: ['mailbox@eval.invalid'] } as const;

export interface EvalRunner {
  run(item: EvalItem): Promise<MessageOutcome>;
  /**
   * Runs the workflow once on a small built-in message (never one of the evaluated ones), so that
   * what the analyzers build on first use (lexicon indexes, compiled rules, schemas) is built before
   * the clock starts, as a running service has it built before its first job.
   */
  warmUp(): Promise<void>;
}

/** A small synthetic message touching every built-in analyzer's first-use path. */
const WARM_UP_MESSAGE = [
  'From: "Example Bank Security" <security@examp1e-bank.invalid>',
  'To: alice@example.org',
  'Reply-To: verify@another.invalid',
  'Subject: Urgent: verify your account',
  'Date: Mon, 1 Jan 2024 10:00:00 +0000',
  'Message-ID: <warm-up@examp1e-bank.invalid>',
  'Authentication-Results: mx.example.org; spf=fail smtp.mailfrom=examp1e-bank.invalid; dkim=none; dmarc=fail',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b1"',
  '',
  '--b1',
  'Content-Type: multipart/alternative; boundary="b2"',
  '',
  '--b2',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Dear customer, your account is suspended. Verify now at http://examp1e-bank.invalid/login or it will be closed within 24 hours.',
  '--b2',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<html><body><p>Dear customer,</p><a href="http://examp1e-bank.invalid/login">https://www.example.com/signin</a><form action="http://203.0.113.9/p"><input type="password" name="pw"></form></body></html>',
  '--b2--',
  '--b1',
  'Content-Type: application/octet-stream; name="invoice.pdf.exe"',
  'Content-Disposition: attachment; filename="invoice.pdf.exe"',
  'Content-Transfer-Encoding: base64',
  '',
  'TVqQAAMAAAAEAAAA//8AALgAAAAAAAAAQAAAAAAAAAAA',
  '--b1--',
  '',
].join('\r\n');

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
  const runBytes = async (raw: Buffer): Promise<Email> => {
    // a mailbox always knows where it delivered a message: used when no header names a recipient
    return parseRawEmail(raw, { envelope: EVAL_ENVELOPE });
  };
  return {
    async warmUp() {
      await runWorkflow(compiled, await runBytes(Buffer.from(WARM_UP_MESSAGE)), deps);
    },
    async run(it) {
      const base = {
        file: it.file,
        ...(it.forgery ? { forgery: it.forgery } : {}),
        label: it.label,
        index: it.index,
        analyzers: {},
        indicatorTypes: [],
        indicators: [],
        symbols: [],
        scores: {},
        groups: {},
      };
      let email: Email;
      try {
        const raw = readFileSync(it.path);
        email = await runBytes(it.forgery ? forge(it.forgery, raw) : raw);
      } catch (err) {
        const error = (err as Error).message.slice(0, 300);
        return { ...base, predicted: false, probability: 0, error, parse_failed: true };
      }
      const out = await runWorkflow(compiled, email, deps);
      const language = viewOf(email).language;
      if (out.status === 'completed') {
        const p = out.result.is_phishing ? out.result.confidence : 1 - out.result.confidence;
        return {
          ...base,
          predicted: out.result.is_phishing,
          probability: p,
          language,
          ...summarizeContext(out.context),
        };
      }
      return {
        ...base,
        predicted: false,
        probability: 0,
        error: out.error.message,
        language,
        ...summarizeContext(out.context),
      };
    },
  };
}
