/** One analyzer or provider call of a stage trace, as `trawl job` shows it. */
interface CallView {
  id: string;
  status: string;
  duration_ms: number;
  attempts?: number;
  error?: string;
}

/** One stage of a job's trace, as `trawl job` shows it. */
export interface StageView {
  name: string;
  status: string;
  duration_ms: number;
  error?: string;
  condition?: string;
  analyzers?: CallView[];
  providers?: CallView[];
  result?: unknown;
}

const short = (s: string, n = 80) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * What a stage did, in one word: its status, except that a stage which "completed" although none of
 * its analyzers succeeded (the llm stage when no LLM is configured: the call fails, the failure is
 * tolerated) shows `no result` rather than `completed`: its calls failed and nothing it gave counts.
 */
function stageOutcome(s: StageView): string {
  const calls = s.analyzers ?? [];
  if (
    s.status === 'completed' &&
    s.result === undefined &&
    calls.length > 0 &&
    !calls.some((a) => a.status === 'success')
  ) {
    return calls.every((a) => a.status === 'skipped') ? 'skipped' : 'no result';
  }
  return s.status;
}

/**
 * The `stages` block of `trawl job`: one line per stage (outcome, duration, why it was skipped or
 * failed), then one indented line per call that did not succeed, with its status and error.
 */
export function formatStages(trace: { duration_ms: number; stages: StageView[] }): string[] {
  const lines = [`stages (${Math.round(trace.duration_ms)} ms)`];
  for (const s of trace.stages) {
    let line = `  ${s.name.padEnd(20)} ${stageOutcome(s).padEnd(10)} ${Math.round(s.duration_ms)} ms`;
    const why = s.error ?? (s.status === 'skipped' ? s.condition : undefined);
    if (why) line += `  ${short(why)}`;
    lines.push(line);
    for (const [kind, calls] of [
      ['provider', s.providers ?? []],
      ['analyzer', s.analyzers ?? []],
    ] as const) {
      for (const a of calls) {
        if (a.status === 'success') continue;
        const tries = a.attempts !== undefined && a.attempts > 1 ? `, ${a.attempts} attempts` : '';
        const err = a.error ? `  ${short(a.error)}` : '';
        lines.push(
          `    ${kind} ${a.id.padEnd(14)} ${a.status.padEnd(8)} ${Math.round(a.duration_ms)} ms${tries}${err}`,
        );
      }
    }
  }
  return lines;
}
