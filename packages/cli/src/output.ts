import type { Out } from './io.ts';

interface Indicator {
  type: string;
  value: string;
  confidence: number;
}
interface Result {
  is_phishing: boolean;
  threat_level: string;
  confidence: number;
  summary: string;
  recommended_action: string;
  indicators: Indicator[];
}
export interface JobView {
  job_id: string;
  email_id?: string;
  status: string;
  workflow?: string;
  created_at?: string;
  started_at?: string | null;
  completed_at?: string | null;
  result?: Result;
  error?: { code: string; message: string; stage?: string; analyzer?: string };
  trace?: { duration_ms: number; stages: { name: string; status: string; duration_ms: number }[] };
}

function color(on: boolean, code: string, s: string): string {
  return on ? `\x1b[${code}m${s}\x1b[0m` : s;
}

const pct = (n: number) => `${Math.round(n * 100)}%`;

/** The readable verdict: verdict, confidence, threat level, action, top indicators. */
export function formatJob(job: JobView, o: { color?: boolean; indicators?: number } = {}): string {
  const c = o.color ?? false;
  const lines: string[] = [];
  lines.push(`job       ${job.job_id}`);
  lines.push(`status    ${job.status}${job.workflow ? `   (workflow ${job.workflow})` : ''}`);
  if (job.created_at) lines.push(`submitted ${job.created_at}`);
  if (job.result) {
    const r = job.result;
    const verdict = r.is_phishing ? color(c, '1;31', 'PHISHING') : color(c, '1;32', 'not phishing');
    lines.push('');
    lines.push(`verdict     ${verdict}`);
    lines.push(`confidence  ${pct(r.confidence)}`);
    lines.push(`threat      ${r.threat_level}`);
    lines.push(`action      ${r.recommended_action}`);
    if (r.summary) lines.push(`summary     ${r.summary}`);
    const top = [...r.indicators]
      .sort((a, b) => b.confidence - a.confidence)
      .slice(0, o.indicators ?? 5);
    if (top.length > 0) {
      lines.push('indicators');
      for (const i of top) lines.push(`  ${pct(i.confidence).padStart(4)}  ${i.type}: ${i.value}`);
      if (r.indicators.length > top.length)
        lines.push(`  … ${r.indicators.length - top.length} more (--json for all)`);
    }
  }
  if (job.error) {
    lines.push('');
    lines.push(`error     ${job.error.code}: ${job.error.message}`);
    if (job.error.stage) lines.push(`          stage ${job.error.stage}`);
    if (job.error.analyzer) lines.push(`          analyzer ${job.error.analyzer}`);
  }
  if (job.trace) {
    const t = job.trace;
    lines.push('');
    lines.push(`stages (${Math.round(t.duration_ms)} ms)`);
    for (const s of t.stages)
      lines.push(`  ${s.name.padEnd(20)} ${s.status.padEnd(10)} ${Math.round(s.duration_ms)} ms`);
  }
  return `${lines.join('\n')}\n`;
}

/** One line per job, newest first. */
export function formatJobList(items: JobView[]): string {
  if (items.length === 0) return 'no jobs\n';
  const rows = items.map((j) => {
    const verdict = j.result
      ? `${j.result.is_phishing ? 'phishing' : 'clean'} ${pct(j.result.confidence)} ${j.result.threat_level}`
      : j.error
        ? j.error.code
        : '';
    return [
      j.job_id,
      j.status.padEnd(10),
      (j.workflow ?? '').padEnd(10),
      j.created_at ?? '',
      verdict,
    ].join('  ');
  });
  return `${['JOB'.padEnd(36), 'STATUS    ', 'WORKFLOW  ', 'SUBMITTED'.padEnd(24), 'VERDICT'].join('  ')}\n${rows.join('\n')}\n`;
}

/** A one-line progress bar redrawn in place; writes nothing when the stream is not a TTY. */
export function progressBar(out: Out) {
  let drawn = false;
  return {
    update(done: number, total: number, label: string) {
      if (!out.isTTY) return;
      const width = 24;
      const frac = total > 0 ? Math.min(1, done / total) : 0;
      const full = Math.round(frac * width);
      out.write(`\r[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${label}\x1b[K`);
      drawn = true;
    },
    done() {
      if (drawn) out.write('\r\x1b[K');
      drawn = false;
    },
  };
}
