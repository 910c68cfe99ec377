import type { Email } from '@trawl/contracts';
import { headerValues } from './header-values.ts';

/** Outcome of one authentication method; `none_seen` when no header reports it. */
export type AuthOutcome =
  | 'pass'
  | 'fail'
  | 'softfail'
  | 'neutral'
  | 'none'
  | 'temperror'
  | 'permerror'
  | 'policy'
  | 'none_seen';

export interface AuthResults {
  spf: AuthOutcome;
  dkim: AuthOutcome;
  dmarc: AuthOutcome;
  arc: AuthOutcome;
  /** Domain named in `header.from=` of a dmarc result, when any. */
  dmarc_from?: string;
}

const RANK: Record<AuthOutcome, number> = {
  none_seen: 0,
  none: 1,
  neutral: 2,
  temperror: 2,
  permerror: 3,
  policy: 3,
  pass: 4,
  softfail: 5,
  fail: 6,
};

function worse(a: AuthOutcome, b: AuthOutcome): AuthOutcome {
  return RANK[b] > RANK[a] ? b : a;
}

const RESULT_RE =
  /\b(spf|dkim|dmarc|arc)\s*=\s*(pass|fail|softfail|neutral|none|temperror|permerror|policy|hardfail)\b/gi;

/**
 * Reads SPF/DKIM/DMARC/ARC outcomes from Authentication-Results, ARC-Authentication-Results and
 * Received-SPF. The worst explicit outcome wins. Absence of results is `none_seen`, never a failure.
 */
export function readAuthResults(email: Email): AuthResults {
  const out: AuthResults = {
    spf: 'none_seen',
    dkim: 'none_seen',
    dmarc: 'none_seen',
    arc: 'none_seen',
  };
  const values = [
    ...headerValues(email, 'authentication-results'),
    ...headerValues(email, 'arc-authentication-results').slice(0, 1),
  ];
  for (const v of values) {
    for (const m of v.matchAll(RESULT_RE)) {
      const method = m[1]!.toLowerCase() as 'spf' | 'dkim' | 'dmarc' | 'arc';
      let outcome = m[2]!.toLowerCase();
      if (outcome === 'hardfail') outcome = 'fail';
      out[method] = worse(out[method], outcome as AuthOutcome);
    }
    const hf = /dmarc\s*=\s*\w+[^;]*?header\.from\s*=\s*([A-Za-z0-9.-]+)/i.exec(v);
    if (hf?.[1] && !out.dmarc_from) out.dmarc_from = hf[1].toLowerCase();
  }
  for (const v of headerValues(email, 'received-spf')) {
    const m = /^\s*(pass|fail|softfail|neutral|none|temperror|permerror)\b/i.exec(v);
    if (m?.[1]) out.spf = worse(out.spf, m[1].toLowerCase() as AuthOutcome);
  }
  return out;
}
