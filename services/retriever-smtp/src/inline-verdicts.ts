import { EnvelopeAddress, type VerdictRequest } from '@trawl/contracts';
import { type InlineVerdicts, unanalyzedVerdict } from './filter.ts';
import type { InlineSubmission, InlineVerdict } from './inline-analysis.ts';
import type { SmtpMetrics } from './metrics.ts';
import type { Knowledge } from './policy.ts';
import type { VerdictBoard } from './verdict-board.ts';

/** One message analysed in this process (startInlineAnalysis of @trawl/analyzer-orchestrator). */
export type InlineAnalyse = (m: InlineSubmission) => Promise<InlineVerdict>;

/** The verdict a finished job stands for, as the mail orchestrator sends it (verdicts.ts). */
function verdictOf(id: string, v: Extract<InlineVerdict, { kind: 'analysed' }>): VerdictRequest {
  const o = v.outcome;
  if (o.status === 'completed') {
    return { id, job_id: v.jobId, result: o.result, verdict: 'analyzed' };
  }
  return {
    id,
    job_id: v.jobId,
    result: {
      is_phishing: false,
      threat_level: 'none',
      confidence: 0,
      summary: `Trawl could not analyse this message (${o.error.code}: ${o.error.message})`.slice(
        0,
        2000,
      ),
      recommended_action: 'review',
      indicators: [],
    },
    error: o.error,
    verdict: 'unanalyzed',
  };
}

/**
 * Verdicts from Trawl's analysis in this process (TRAWL_MILTER_ANALYSIS=inline, ADR 013 section
 * 5): the message is analysed now, by the orchestrator's own code, its job recorded afterwards.
 * A verdict is posted to the board, so that Postfix's retry of the same bytes (after a deadline,
 * or a lost answer) is answered from it and not analysed, nor recorded, twice. An analysis the
 * deadline cut short goes on: its job is recorded and its verdict kept for the retry, as a late
 * verdict of the push path is (a retry arriving while it runs waits for it). A message Trawl
 * cannot take now (the record queue is full, stopping) is answered as a timeout: 451 unless the
 * fail-open setting says deliver.
 */
export function inlineVerdicts(o: {
  analyse: InlineAnalyse;
  board: VerdictBoard;
  metrics: SmtpMetrics;
  /** The name the jobs are recorded under (TRAWL_MILTER_RETRIEVER). */
  retriever: string;
}): InlineVerdicts {
  /** Analyses in progress by message id: a retry arriving meanwhile waits for the same one. */
  const running = new Map<string, Promise<Knowledge>>();
  return async (m, deadline) => {
    const analysed = running.get(m.id) ?? analyseOnce(m);
    if (deadline.aborted) return { kind: 'timeout', reason: 'no verdict within the deadline' };
    let onAbort: (() => void) | undefined;
    const timedOut = new Promise<Knowledge>((resolve) => {
      onAbort = () => resolve({ kind: 'timeout', reason: 'no verdict within the deadline' });
      deadline.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([analysed, timedOut]);
    } finally {
      if (onAbort) deadline.removeEventListener('abort', onAbort);
    }
  };

  function analyseOnce(m: { id: string; raw: Buffer; to: string[] }): Promise<Knowledge> {
    const analysed = o
      .analyse({
        raw: m.raw,
        envelopeTo: m.to.filter((a) => EnvelopeAddress.safeParse(a).success).slice(0, 16),
        origin: { retriever: o.retriever, message_id: m.id },
      })
      .then((v): Knowledge => {
        if (v.kind === 'unavailable') return { kind: 'timeout', reason: v.reason };
        const verdict =
          v.kind === 'refused' ? unanalyzedVerdict(m.id, v.detail) : verdictOf(m.id, v);
        o.board.post(verdict);
        o.metrics.verdicts.inc({ verdict: verdict.verdict ?? 'analyzed' });
        return { kind: 'verdict', verdict };
      })
      .finally(() => running.delete(m.id));
    running.set(m.id, analysed);
    return analysed;
  }
}
