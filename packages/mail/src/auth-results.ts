import { AUTH_RESULT_VALUES, type Email } from '@trawl/contracts';
import { getDomain } from 'tldts';
import { firstHeader, headerValues } from './header-values.ts';

function org(host: string): string {
  return host ? (getDomain(host, { allowPrivateDomains: false }) ?? host) : '';
}

/** The registrable domain of the host that wrote the topmost Received header (`by host`). */
function receivingOrg(email: Email): string {
  const r = firstHeader(email, 'received') ?? '';
  const m = /\bby\s+([A-Za-z0-9.-]{1,253})/.exec(r.slice(0, 2000));
  return m?.[1] ? org(m[1].toLowerCase()) : '';
}

/**
 * Which authserv-ids count, and whether they are verified: the configured ids; else the topmost
 * Authentication-Results' id when the host that wrote the topmost Received header belongs to the
 * same organisation; else an anonymous topmost header (some receivers write no id), for failures
 * only. A topmost header with another organisation's id was written before the message reached
 * the receiver (by the sender, a list, a forwarder) and counts for nothing.
 */
function trustedIds(
  email: Email,
  all: readonly string[],
  trusted: readonly string[],
): { ids: Set<string>; verified: boolean } {
  if (trusted.length > 0)
    return { ids: new Set(trusted.map((t) => t.toLowerCase())), verified: true };
  if (!all.length) return { ids: new Set(), verified: false };
  const top = authservIdOf(all[0]!);
  if (top === '') return { ids: new Set(['']), verified: false };
  const rx = receivingOrg(email);
  if (rx && org(top) === rx) return { ids: new Set([top]), verified: true };
  return { ids: new Set(), verified: false };
}

/** Outcome of one authentication method; `none_seen` when no trusted header reports it. */
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

/** SPF, DKIM and DMARC outcomes read from a message's Authentication-Results headers. */
export interface AuthResults {
  spf: AuthOutcome;
  dkim: AuthOutcome;
  dmarc: AuthOutcome;
  arc: AuthOutcome;
  /** Domain named in `header.from=` of a dmarc result, when any. */
  dmarc_from?: string;
  /** Signing domains (`header.d=`, or the domain of `header.i=`) of the DKIM results that passed. */
  dkim_pass_domains: string[];
  /** The authserv-id whose results were read ('' when none was trusted). */
  authserv_id: string;
  /** The results come from the ARC-Authentication-Results of the last sealer (see below). */
  via_arc: boolean;
  /**
   * The signing domain (`d=`) of the highest-instance ARC-Seal, lower-case ('' when none). Its
   * ARC-Authentication-Results are read only when it is one of the operator's trusted sealers.
   */
  arc_sealer: string;
  /** The trusted hop says `arc=pass` and the last sealer is one the operator trusts. */
  arc_trusted: boolean;
  /**
   * The authserv-id is known to be the receiving organisation's (configured, or the host that
   * wrote the topmost Received header): passes are believed. Otherwise only failures count.
   */
  verified: boolean;
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

/** The results a method may give (RFC 8601), and the "hardfail" some receivers write for fail. */
const OUTCOMES = new Set<string>([...AUTH_RESULT_VALUES, 'hardfail']);

function worse(a: AuthOutcome, b: AuthOutcome): AuthOutcome {
  return RANK[b] > RANK[a] ? b : a;
}

/** The first `;`-separated segment of a value, when it is an authserv-id (no `=` in it). */
function idSegment(value: string): string | undefined {
  const semi = value.indexOf(';');
  const head = semi === -1 ? value : value.slice(0, semi);
  return head.includes('=') ? undefined : head;
}

/**
 * The authserv-id of an Authentication-Results value: its first token, lower-case. Some receivers
 * (Microsoft 365) write none and start with a result: such a header's id is ''.
 */
export function authservIdOf(value: string): string {
  const head = idSegment(value)?.trim() ?? '';
  const sp = head.search(/\s/);
  return (sp === -1 ? head : head.slice(0, sp)).toLowerCase();
}

function emptyResults(authservId: string): AuthResults {
  return {
    spf: 'none_seen',
    dkim: 'none_seen',
    dmarc: 'none_seen',
    arc: 'none_seen',
    dkim_pass_domains: [],
    authserv_id: authservId,
    via_arc: false,
    arc_sealer: '',
    arc_trusted: false,
    verified: false,
  };
}

/** A property value (`header.d=example.com`) in one method-result segment, lower-case. */
function prop(segment: string, name: string): string | undefined {
  const at = segment.indexOf(`${name}=`);
  if (at === -1) return undefined;
  let end = at + name.length + 1;
  while (end < segment.length && !/[\s;()]/.test(segment[end]!)) end++;
  return segment.slice(at + name.length + 1, end).toLowerCase() || undefined;
}

/** Adds the method results of one Authentication-Results (or ARC-A-R) value to `out`. */
function readValue(value: string, out: AuthResults): void {
  // resinfo segments are separated by ';' (RFC 8601 section 2.2); the first is the authserv-id
  const parts = value.split(';');
  for (let k = idSegment(value) === undefined ? 0 : 1; k < parts.length && k < 64; k++) {
    const seg = parts[k]!.trim();
    const eq = seg.indexOf('=');
    if (eq < 3) continue;
    const method = seg.slice(0, eq).trim().toLowerCase();
    if (method !== 'spf' && method !== 'dkim' && method !== 'dmarc' && method !== 'arc') continue;
    const m = /^\s*([a-z]+)/i.exec(seg.slice(eq + 1));
    let outcome = m?.[1]?.toLowerCase() ?? '';
    if (!OUTCOMES.has(outcome)) continue;
    if (outcome === 'hardfail') outcome = 'fail';
    out[method] = worse(out[method], outcome as AuthOutcome);
    if (method === 'dmarc' && !out.dmarc_from) {
      const hf = prop(seg, 'header.from');
      if (hf) out.dmarc_from = hf;
    }
    if (method === 'dkim' && outcome === 'pass') {
      const d = prop(seg, 'header.d') ?? prop(seg, 'header.i')?.split('@').pop();
      if (d && !out.dkim_pass_domains.includes(d)) out.dkim_pass_domains.push(d);
    }
  }
}

/** The `i=` instance of an ARC header value, 0 when absent. */
function arcInstance(value: string): number {
  const m = /(?:^|;)\s*i\s*=\s*(\d{1,2})\b/.exec(value);
  return m ? Number(m[1]) : 0;
}

/** The `d=` of the ARC-Seal of the highest instance, lower-case ('' when none). */
function lastSealer(email: Email): string {
  let d = '';
  let bestI = 0;
  for (const v of headerValues(email, 'arc-seal').slice(0, 50)) {
    const i = arcInstance(v);
    if (i <= bestI) continue;
    const m = /(?:^|;)\s*d\s*=\s*([A-Za-z0-9.-]{1,253})/.exec(v);
    bestI = i;
    d = m?.[1]?.toLowerCase() ?? '';
  }
  return d;
}

/** Whether `domain` is one of `sealers` or below one. */
function trustedSealer(domain: string, sealers: readonly string[]): boolean {
  if (!domain) return false;
  return sealers.some((s) => {
    const t = s.toLowerCase();
    return domain === t || domain.endsWith(`.${t}`);
  });
}

/** Whose Authentication-Results headers readAuthResults trusts. */
export interface AuthReadOptions {
  /**
   * Sealers (ARC-Seal `d=` domains) whose ARC-Authentication-Results the operator trusts, as
   * SpamAssassin's `arc_trusted_sealers`, Rspamd's `whitelisted_signers_map` and Microsoft 365's
   * trusted ARC sealers: an intermediary the organisation knows (its own gateway, a list host it
   * uses). Anyone can seal a message and make the seal verify, so by default (none) ARC explains
   * nothing.
   */
  arcSealers?: readonly string[];
}

/**
 * Reads SPF/DKIM/DMARC/ARC outcomes as RFC 8601 says: only Authentication-Results written by the
 * receiving organisation count, recognised by their authserv-id (`trusted`; by default see
 * trustedIds: the nearest hop's). Results any other hop wrote (the sender's own server, a list, a
 * forwarder) are evidence of nothing: the sender can write them.
 *
 * When the trusted hop says `arc=pass` and the last sealer is one the operator trusts
 * (`opts.arcSealers`), the message came through an intermediary the organisation knows whose
 * re-signing explains a broken SPF/DKIM/DMARC, so the results that sealer recorded (the
 * ARC-Authentication-Results of the highest instance) are read instead of the trusted hop's
 * failures. A seal proves only who sealed: an attacker's own relay seals a spoof as `pass` and its
 * seal verifies, so an untrusted sealer's results are never read. Received-SPF counts only as the
 * topmost one, and only when the trusted hop recorded no SPF result. The worst result of a method
 * wins; absence is `none_seen`, never a failure.
 */
export function readAuthResults(
  email: Email,
  trusted: readonly string[] = [],
  opts: AuthReadOptions = {},
): AuthResults {
  const all = headerValues(email, 'authentication-results');
  const { ids, verified } = trustedIds(email, all, trusted);
  const firstTrusted = all.find((v) => ids.has(authservIdOf(v)));
  const out = emptyResults(firstTrusted ? authservIdOf(firstTrusted) : '');
  out.verified = verified && firstTrusted !== undefined;
  for (const v of all) if (ids.has(authservIdOf(v))) readValue(v, out);
  if (out.arc !== 'none_seen') out.arc_sealer = lastSealer(email);
  out.arc_trusted = out.arc === 'pass' && trustedSealer(out.arc_sealer, opts.arcSealers ?? []);
  if (out.arc_trusted && (out.dkim === 'fail' || out.dmarc === 'fail' || out.spf === 'fail')) {
    let best: string | undefined;
    let bestI = 0;
    for (const v of headerValues(email, 'arc-authentication-results')) {
      const i = arcInstance(v);
      if (i > bestI) {
        best = v;
        bestI = i;
      }
    }
    if (best) {
      const sealed = emptyResults(out.authserv_id);
      // the instance tag precedes the authserv-id: "i=1; lists.example.org; dkim=pass ..."
      readValue(best.slice(best.indexOf(';') + 1), sealed);
      sealed.arc = 'pass';
      sealed.via_arc = true;
      sealed.arc_sealer = out.arc_sealer;
      sealed.arc_trusted = true;
      sealed.verified = out.verified;
      return sealed;
    }
  }
  if (out.spf === 'none_seen') {
    const rs = headerValues(email, 'received-spf')[0];
    const m = rs ? /^\s*(pass|fail|softfail|neutral|none|temperror|permerror)\b/i.exec(rs) : null;
    if (m?.[1]) out.spf = m[1].toLowerCase() as AuthOutcome;
  }
  return out;
}
