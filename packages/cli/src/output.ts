import type { AnalysisResult, Evidence, EvidenceRef } from '@trawl/contracts';
import type { Out } from './io.ts';
import { formatStages, type StageView } from './stage-trace.ts';

/** The verdict as the API shows it (the contracts' shape; levels and actions read as any string). */
type ResultView = Omit<AnalysisResult, 'threat_level' | 'recommended_action'> & {
  threat_level: string;
  recommended_action: string;
};

/** A job as the CLI prints it. */
export interface JobView {
  job_id: string;
  email_id?: string;
  status: string;
  workflow?: string;
  created_at?: string;
  started_at?: string | null;
  completed_at?: string | null;
  result?: ResultView;
  error?: { code: string; message: string; stage?: string; analyzer?: string };
  trace?: { duration_ms: number; stages: StageView[] };
  /** The campaign the job is in (issue 16). */
  campaign?: { id: string; size: number; recipients: number; reporters: number };
  /** A reported message: who reported it (reported-mail triage, issue 16). */
  report?: { reporter: string; reported_at: string; wrapper_subject: string; found: string };
  // What the list shows (issue 32); absent on jobs stored before the list carried them.
  subject?: string;
  sender?: string;
  sender_name?: string;
  recipients?: string[];
  recipient_count?: number;
  reporter?: string;
  top_indicator?: { type: string; value: string; confidence: number };
}

function color(on: boolean, code: string, s: string): string {
  return on ? `\x1b[${code}m${s}\x1b[0m` : s;
}

const pct = (n: number) => `${Math.round(n * 100)}%`;

/** The readable verdict: verdict, confidence, threat level, action, top indicators. */
export function formatJob(
  job: JobView,
  o: { color?: boolean; indicators?: number; evidence?: boolean } = {},
): string {
  const c = o.color ?? false;
  const lines: string[] = [];
  lines.push(`job       ${job.job_id}`);
  lines.push(`status    ${job.status}${job.workflow ? `   (workflow ${job.workflow})` : ''}`);
  if (job.created_at) lines.push(`submitted ${job.created_at}`);
  if (job.subject !== undefined) lines.push(`subject   ${job.subject}`);
  if (job.sender !== undefined)
    lines.push(`from      ${job.sender_name ? `${job.sender_name} <${job.sender}>` : job.sender}`);
  if (job.recipients?.length) {
    const more = (job.recipient_count ?? 0) - job.recipients.length;
    lines.push(`to        ${job.recipients.join(', ')}${more > 0 ? ` and ${more} more` : ''}`);
  }
  if (job.report) {
    const how =
      job.report.found === 'none' ? 'no original found inside' : `original: ${job.report.found}`;
    lines.push(`reported  by ${job.report.reporter} at ${job.report.reported_at} (${how})`);
  }
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
      for (const i of top) {
        const about = i.evidence ? `  [${refLabel(i.evidence, r.evidence)}]` : '';
        lines.push(`  ${pct(i.confidence).padStart(4)}  ${i.type}: ${i.value}${about}`);
      }
      if (r.indicators.length > top.length)
        lines.push(`  … ${r.indicators.length - top.length} more (--json for all)`);
    }
  }
  if (job.campaign) {
    const k = job.campaign;
    lines.push(
      `campaign    ${k.id}: ${k.size} message(s), ${k.recipients} recipient(s), ${k.reporters} reporter(s) (trawl campaigns ${k.id})`,
    );
  }
  if (o.evidence && job.result?.evidence) lines.push('', ...formatEvidence(job.result.evidence));
  if (job.error) {
    lines.push('');
    lines.push(`error     ${job.error.code}: ${job.error.message}`);
    if (job.error.stage) lines.push(`          stage ${job.error.stage}`);
    if (job.error.analyzer) lines.push(`          analyzer ${job.error.analyzer}`);
  }
  if (job.trace) {
    lines.push('', ...formatStages(job.trace));
  }
  return `${lines.join('\n')}\n`;
}

const short = (s: string, n = 100) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** What an indicator is about, in words: `url #2 t.co`, `attachment #1 docs.zip`, `header reply_to`. */
function refLabel(ref: EvidenceRef, ev: Evidence | undefined): string {
  if (ref.kind === 'url' && ref.index !== undefined) {
    const u = ev?.urls[ref.index];
    return `url #${ref.index + 1}${u ? ` ${u.host || short(u.url, 40)}` : ''}`;
  }
  if (ref.kind === 'attachment' && ref.index !== undefined) {
    const a = ev?.attachments[ref.index];
    return `attachment #${ref.index + 1}${a ? ` ${short(a.filename, 40)}` : ''}`;
  }
  return ref.name ? `${ref.kind} ${ref.name}` : ref.kind;
}

/** The evidence, readably: the message, its path, authentication, URLs, attachments. */
function formatEvidence(ev: Evidence): string[] {
  const m = ev.message;
  const out: string[] = ['message'];
  const from = m.from.display_name
    ? `"${m.from.display_name}" <${m.from.address}>`
    : m.from.address;
  out.push(`  subject      ${m.subject}`);
  out.push(`  from         ${from}`);
  if (m.reply_to.length) out.push(`  reply-to     ${m.reply_to.join(', ')}`);
  if (m.return_path) out.push(`  return-path  ${m.return_path}`);
  out.push(`  to           ${m.to.join(', ')}`);
  if (m.cc.length) out.push(`  cc           ${m.cc.join(', ')}`);
  if (m.bcc.length) out.push(`  bcc          ${m.bcc.join(', ')}`);
  out.push(`  date         ${m.date}`);
  if (m.message_id) out.push(`  message-id   ${m.message_id}`);
  out.push(`  sending ip   ${ev.received.sending_ip ?? '(unknown)'}`);
  if (ev.received.hops.length) {
    out.push('  received (newest first)');
    for (const h of ev.received.hops) {
      out.push(
        `    ${h.from ?? '?'}${h.ip ? ` [${h.ip}]` : ''} → ${h.by ?? '?'}${h.date ? `  ${h.date}` : ''}`,
      );
    }
  }
  const a = ev.auth;
  out.push(
    `  auth         spf=${a.spf} dkim=${a.dkim} dmarc=${a.dmarc} arc=${a.arc}` +
      (a.authserv_id ? `  (by ${a.authserv_id}${a.verified ? '' : ', unverified'})` : ''),
  );
  if (ev.urls.length) {
    out.push(`urls (${ev.urls.length})`);
    ev.urls.forEach((u, i) => {
      const where =
        u.found_in === 'attachment' ? `attachment #${(u.attachment ?? 0) + 1}` : u.found_in;
      const domain = u.registrable_domain ? `  [${u.registrable_domain}]` : '';
      out.push(`  #${String(i + 1).padEnd(3)} ${short(u.decoded)}${domain}  (${where})`);
      if (u.text) out.push(`        shown as “${short(u.text, 80)}”`);
    });
  }
  if (ev.attachments.length) {
    out.push(`attachments (${ev.attachments.length})`);
    ev.attachments.forEach((x, i) => {
      const type =
        x.sniffed_type && x.sniffed_type !== x.declared_type
          ? `${x.declared_type} → really ${x.sniffed_type}`
          : x.declared_type;
      const size = x.size !== undefined ? `  ${x.size} bytes` : '';
      out.push(`  #${String(i + 1).padEnd(3)} ${x.filename}  ${type}${size}`);
      if (x.sha256) out.push(`        sha256 ${x.sha256}`);
      if (x.contents?.length) out.push(`        contains ${short(x.contents.join(', '), 200)}`);
      if (x.findings?.length) out.push(`        found ${x.findings.join(', ')}`);
    });
  }
  if (ev.truncated) {
    out.push(
      `(cut: ${Object.entries(ev.truncated)
        .map(([k, n]) => `${n} more ${k}`)
        .join(', ')}; --json has what is kept)`,
    );
  }
  return out;
}

/** One line per job, newest first. */
/** `text` cut to `n` characters (an ellipsis marks the cut). */
function clip(text: string, n: number): string {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

/** The jobs list: one line a job, what an analyst triages by (issue 32). */
export function formatJobList(items: JobView[]): string {
  if (items.length === 0) return 'no jobs\n';
  const rows = items.map((j) => {
    const verdict = j.result
      ? `${j.result.is_phishing ? 'phishing' : 'clean'} ${pct(j.result.confidence)} ${j.result.threat_level}`
      : j.error
        ? j.error.code
        : j.status;
    const to = j.recipients?.length
      ? `${j.recipients[0]}${(j.recipient_count ?? 1) > 1 ? ` +${(j.recipient_count ?? 1) - 1}` : ''}`
      : '';
    return [
      j.job_id,
      (j.created_at ?? '').slice(0, 19).padEnd(19),
      clip(verdict, 24).padEnd(24),
      clip(j.sender ?? '', 32).padEnd(32),
      clip(to, 28).padEnd(28),
      clip(j.reporter ?? '', 24).padEnd(24),
      clip(j.top_indicator?.type ?? '', 24).padEnd(24),
      j.subject ?? '',
    ].join('  ');
  });
  const head = [
    'JOB'.padEnd(36),
    'SUBMITTED'.padEnd(19),
    'VERDICT'.padEnd(24),
    'FROM'.padEnd(32),
    'TO'.padEnd(28),
    'REPORTED BY'.padEnd(24),
    'TOP INDICATOR'.padEnd(24),
    'SUBJECT',
  ].join('  ');
  return `${head}\n${rows.join('\n')}\n`;
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
