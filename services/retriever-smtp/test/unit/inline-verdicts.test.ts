import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createSmtpMetrics, inlineVerdicts, VerdictBoard } from '../../src/index.ts';
import type { InlineSubmission, InlineVerdict } from '../../src/inline-analysis.ts';

const RESULT = {
  is_phishing: true,
  threat_level: 'high' as const,
  confidence: 0.9,
  summary: 'lure',
  recommended_action: 'quarantine' as const,
  indicators: [],
};
const TRACE = { workflow_id: 'default', config_version: 'v', duration_ms: 1, stages: [] };

/** The inline verdicts over an analysis the test answers by hand. */
function setup() {
  const calls: InlineSubmission[] = [];
  let answer: (v: InlineVerdict) => void = () => undefined;
  const board = new VerdictBoard();
  const verdicts = inlineVerdicts({
    analyse: (m) => {
      calls.push(m);
      return new Promise((r) => {
        answer = r;
      });
    },
    board,
    metrics: createSmtpMetrics(new Registry()),
    retriever: 'smtp-mx1',
  });
  return { calls, board, verdicts, answer: (v: InlineVerdict) => answer(v) };
}

/** A completed analysis of job `jobId`. */
const done = (jobId: string): InlineVerdict => ({
  kind: 'analysed',
  jobId,
  outcome: { status: 'completed', result: RESULT, trace: TRACE, context: {} },
});

const msg = {
  id: 'ref-1',
  raw: Buffer.from('Subject: x\r\n\r\nbody'),
  to: ['bob@example.org', 'x'],
};

describe('inline verdicts (TRAWL_MILTER_ANALYSIS=inline)', () => {
  it('answers the analysed verdict, keeps it on the board, and sends only valid recipients', async () => {
    const s = setup();
    const k = s.verdicts(msg, new AbortController().signal);
    s.answer(done('job-1'));
    expect(await k).toMatchObject({
      kind: 'verdict',
      verdict: { id: 'ref-1', job_id: 'job-1', verdict: 'analyzed' },
    });
    expect(s.calls[0]).toMatchObject({
      envelopeTo: ['bob@example.org'],
      origin: { retriever: 'smtp-mx1', message_id: 'ref-1' },
    });
    expect(s.board.known('ref-1')?.job_id).toBe('job-1');
  });

  it('a retry while the analysis runs waits for the same one: one analysis, one job', async () => {
    const s = setup();
    const first = s.verdicts(msg, new AbortController().signal);
    const second = s.verdicts(msg, new AbortController().signal);
    s.answer(done('job-2'));
    expect((await first).kind).toBe('verdict');
    expect((await second).kind).toBe('verdict');
    expect(s.calls).toHaveLength(1);
  });

  it('never answers clean what Trawl could not analyse', async () => {
    const failed = setup();
    const k = failed.verdicts(msg, new AbortController().signal);
    failed.answer({
      kind: 'analysed',
      jobId: 'job-3',
      outcome: {
        status: 'failed',
        error: { code: 'X', message: 'no analyzer' },
        trace: TRACE,
        context: {},
      },
    });
    expect(await k).toMatchObject({ kind: 'verdict', verdict: { verdict: 'unanalyzed' } });

    const refused = setup();
    const r = refused.verdicts(msg, new AbortController().signal);
    refused.answer({ kind: 'refused', detail: 'not a message' });
    expect(await r).toMatchObject({
      kind: 'verdict',
      verdict: { verdict: 'unanalyzed', job_id: 'unanalyzed:ref-1' },
    });

    const busy = setup();
    const b = busy.verdicts(msg, new AbortController().signal);
    busy.answer({ kind: 'unavailable', reason: 'queue full' });
    expect(await b).toEqual({ kind: 'timeout', reason: 'queue full' });
  });

  it('at the deadline answers a timeout; the analysis goes on and its verdict is kept', async () => {
    const s = setup();
    const ac = new AbortController();
    const k = s.verdicts(msg, ac.signal);
    ac.abort();
    expect((await k).kind).toBe('timeout');
    s.answer(done('job-4'));
    await new Promise((r) => setImmediate(r));
    expect(s.board.known('ref-1')?.job_id).toBe('job-4');
  });
});
