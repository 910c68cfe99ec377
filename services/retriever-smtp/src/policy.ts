import type { VerdictRequest } from '@trawl/contracts';
import { effectiveAction, type FilterAction, type SmtpSettings } from './settings.ts';

/** What the filter knows of a message when it must answer. */
export type Knowledge =
  | { kind: 'verdict'; verdict: VerdictRequest }
  /** No verdict by the deadline, or Trawl could not be reached. */
  | { kind: 'timeout'; reason: string };

/** What the filter answers Postfix. */
export type Decision =
  | {
      kind: 'deliver';
      action: Exclude<FilterAction, 'reject'>;
      headers: [string, string][];
      subjectPrefix?: string | undefined;
      /** Envelope recipients replaced by the quarantine mailbox. */
      quarantine?: string | undefined;
    }
  | { kind: 'reject'; code: 550; message: string; headers: [string, string][] }
  | { kind: 'tempfail'; code: 451; message: string };

const JOB_ID_CHARS = /^[A-Za-z0-9:._-]{1,200}$/;

/** The phishing probability the verdict stands for (decisions.md: p of the aggregate). */
export function scoreOf(v: VerdictRequest): number {
  const c = v.result.confidence;
  return v.result.is_phishing ? c : 1 - c;
}

/** The X-Trawl-* header fields that say what Trawl knows of a message. */
export function tagHeaders(k: Knowledge): [string, string][] {
  if (k.kind === 'timeout') return [['X-Trawl-Verdict', 'unanalyzed']];
  const v = k.verdict;
  const out: [string, string][] = [];
  if (v.verdict === 'unanalyzed') {
    out.push(['X-Trawl-Verdict', 'unanalyzed']);
  } else {
    out.push(['X-Trawl-Verdict', v.result.is_phishing ? 'phishing' : 'clean']);
    out.push(['X-Trawl-Score', scoreOf(v).toFixed(3)]);
    out.push(['X-Trawl-Threat-Level', v.result.threat_level]);
  }
  if (JOB_ID_CHARS.test(v.job_id)) out.push(['X-Trawl-Job', v.job_id]);
  return out;
}

/** The reason given with a 550 (one line, no detail an attacker could tune against). */
function rejectMessage(v: VerdictRequest): string {
  if (v.verdict === 'unanalyzed') return '5.7.1 Message refused: it could not be analysed';
  return `5.7.1 Message refused as ${v.result.is_phishing ? 'phishing' : 'suspicious'} (threat level ${v.result.threat_level})`;
}

/** What the filter does with a message, from what Trawl knows of it and the operator's policy. */
export function decide(k: Knowledge, s: SmtpSettings): Decision {
  const headers = tagHeaders(k);
  if (k.kind === 'timeout') {
    if (s.on_timeout === 'tempfail' && !s.tag_only) {
      return {
        kind: 'tempfail',
        code: 451,
        message: `4.7.1 Message not analysed yet (${k.reason}); try again later`,
      };
    }
    return { kind: 'deliver', action: 'deliver', headers };
  }
  const v = k.verdict;
  const wanted = v.verdict === 'unanalyzed' ? s.unanalyzed_action : s.policy[v.result.threat_level];
  const action = effectiveAction(wanted, s.mode);
  if (s.tag_only) {
    // what the policy would do, for the operator to read before turning it on
    headers.push(['X-Trawl-Policy-Action', action]);
    return { kind: 'deliver', action: 'deliver', headers };
  }
  switch (action) {
    case 'reject':
      return { kind: 'reject', code: 550, message: rejectMessage(v), headers };
    case 'quarantine':
      return { kind: 'deliver', action, headers, quarantine: s.quarantine_address };
    case 'prefix':
      return { kind: 'deliver', action, headers, subjectPrefix: s.subject_prefix };
    default:
      return { kind: 'deliver', action: 'deliver', headers };
  }
}
