import { createHash } from 'node:crypto';
import type {
  AnalyzerAnswerInput,
  Email,
  EvidenceRef,
  Indicator,
  ListKind,
  ListName,
} from '@trawl/contracts';
import { extractUrls, readAuthResults, registrableDomain } from '@trawl/mail';
import type { LiveListEntry } from '@trawl/platform';
import { answerFrom, type Finding } from '../shared/score.ts';
import type { ListsSettings } from './settings.ts';
import type { ListTables } from './source.ts';
import { LIST_SYMBOLS } from './symbols.ts';

/** One entry that matched the message, as the evidence shows it. */
export interface ListMatch {
  list: ListName;
  kind: ListKind;
  value: string;
  entry_id: string;
  note: string | null;
  /** What of the message matched (the address, host or attachment name). */
  matched: string;
  /** False for an allow that does not count, and why (`reason`). */
  counted: boolean;
  reason?: string;
}

type Symbol = keyof typeof LIST_SYMBOLS;

/** The domain and each parent domain, down to the registrable one: `a.b.example` → it, `b.example`. */
function domainAndParents(d: string): string[] {
  const out = [d];
  const floor = registrableDomain(d) ?? d;
  let rest = d;
  while (rest !== floor) {
    const dot = rest.indexOf('.');
    if (dot === -1) break;
    rest = rest.slice(dot + 1);
    out.push(rest);
  }
  return out;
}

/** The live entry of `table` matching a domain or one of its parents. */
function byDomain(table: Map<string, LiveListEntry>, d: string, now: number) {
  for (const x of domainAndParents(d)) {
    const e = table.get(x);
    if (e && live(e, now)) return e;
  }
  return undefined;
}

const live = (e: LiveListEntry, now: number) => e.expires_at_ms === null || e.expires_at_ms > now;

/** DMARC passed for the From domain, or DKIM passed for a domain aligned with it, at the trusted hop. */
function authenticated(email: Email, fromOrg: string, s: ListsSettings): boolean {
  const a = readAuthResults(email, s.authserv_ids);
  if (!a.verified || !fromOrg) return false;
  const org = (d: string) => registrableDomain(d) ?? d;
  if (a.dmarc === 'pass' && (!a.dmarc_from || org(a.dmarc_from) === fromOrg)) return true;
  return a.dkim_pass_domains.some((d) => org(d) === fromOrg);
}

const WHY: Record<ListKind, string> = {
  sender: 'the From address',
  sender_domain: 'the From domain',
  url_host: 'a link host',
  sha256: 'an attachment',
};

/**
 * Matches a message against the organisation's lists (issue 32): the From address and domain, the
 * host of each link, the SHA-256 of each attachment. A block of any of them fires its symbol; an
 * allow of the sender counts only when the sender's domain authenticated the message (anyone can
 * write a From header); an allow of links or attachments only when every one of them is allowed.
 * When a block matched, no allow counts. Whether a threat-intelligence listing or a payload
 * overrules an allow is the scorer's to say (it sees the other analyzers): the `org_allow` group
 * yields to `threat_intel` and `payload`.
 */
export function analyzeLists(
  email: Email,
  s: ListsSettings,
  t: ListTables,
  now: number,
): AnalyzerAnswerInput {
  const matches: ListMatch[] = [];
  const findings: Finding[] = [];
  const hit = (list: ListName, kind: ListKind, e: LiveListEntry, matched: string) => {
    matches.push({
      list,
      kind,
      value: e.value,
      entry_id: e.id,
      note: e.note,
      matched,
      counted: true,
    });
  };
  if (t.size > 0) {
    const from = email.headers.sender.trim().toLowerCase();
    const at = from.lastIndexOf('@');
    const domain = at === -1 ? '' : from.slice(at + 1);
    const urlHosts = [
      ...new Set(
        extractUrls(email)
          .map((u) => u.host)
          .filter((h) => h !== ''),
      ),
    ];
    const needHashes = t.get('block', 'sha256').size > 0 || t.get('allow', 'sha256').size > 0;
    const hashes = needHashes
      ? (email.attachments ?? []).map((a) => ({
          name: a.filename,
          sha: a.content
            ? createHash('sha256').update(Buffer.from(a.content, 'base64')).digest('hex')
            : undefined,
        }))
      : [];
    for (const list of ['block', 'allow'] as const) {
      const sender = t.get(list, 'sender').get(from);
      if (sender && live(sender, now)) hit(list, 'sender', sender, from);
      const dom = domain ? byDomain(t.get(list, 'sender_domain'), domain, now) : undefined;
      if (dom) hit(list, 'sender_domain', dom, domain);
      const hosts = t.get(list, 'url_host');
      const onList = urlHosts.map((h) => ({ h, e: byDomain(hosts, h, now) }));
      if (list === 'block') {
        for (const { h, e } of onList) if (e) hit(list, 'url_host', e, h);
      } else if (onList.length > 0 && onList.every((x) => x.e)) {
        for (const { h, e } of onList) if (e) hit(list, 'url_host', e, h);
      }
      const shas = t.get(list, 'sha256');
      const onSha = hashes.map((x) => ({ ...x, e: x.sha ? shas.get(x.sha) : undefined }));
      const fits = onSha.filter((x) => x.e && live(x.e, now));
      if (list === 'block' || (fits.length > 0 && fits.length === onSha.length)) {
        for (const x of fits) if (x.e) hit(list, 'sha256', x.e, x.name);
      }
    }
    const blocked = matches.some((m) => m.list === 'block');
    const senderAuth =
      !blocked &&
      matches.some((m) => m.list === 'allow' && (m.kind === 'sender' || m.kind === 'sender_domain'))
        ? authenticated(email, registrableDomain(domain) ?? domain, s)
        : false;
    for (const m of matches) {
      if (m.list === 'allow' && blocked) {
        m.counted = false;
        m.reason = 'a block matched too: a block always wins';
      } else if (m.list === 'allow' && (m.kind === 'sender' || m.kind === 'sender_domain')) {
        if (!senderAuth) {
          m.counted = false;
          m.reason = `${domain || 'the From domain'} did not authenticate the message (no aligned DMARC or DKIM pass at the trusted hop)`;
        }
      }
    }
    for (const m of matches) {
      if (!m.counted) continue;
      const symbol = `list_${m.list}_${m.kind}` as Symbol;
      findings.push({
        type: m.list === 'block' ? 'block_listed' : 'allow_listed',
        value: `${WHY[m.kind]} ${m.matched} is on the ${m.list} list${m.note ? ` (${m.note})` : ''}`,
        symbol,
        weight: s.weights[symbol],
      });
    }
  }
  const answer = answerFrom(findings, {
    base: 0.1,
    threshold: s.phishing_score_threshold,
    name: 'lists',
    groups: LIST_SYMBOLS,
    details: { matches: matches.slice(0, 50) },
  });
  // every match shown, an allow too (answerFrom keeps only evidence of phishing as indicators)
  answer.indicators = [...answer.indicators, ...allowIndicators(matches)].slice(0, 50);
  return answer;
}

/** An indicator for each allow that counted: what the job page shows beside the score. */
function allowIndicators(matches: ListMatch[]): Indicator[] {
  return matches
    .filter((m) => m.list === 'allow' && m.counted)
    .map((m) => {
      const ind: Indicator = {
        type: 'allow_listed',
        value:
          `${WHY[m.kind]} ${m.matched} is on the allow list${m.note ? ` (${m.note})` : ''}`.slice(
            0,
            500,
          ),
        confidence: 0.9,
      };
      const ref = refOf(m);
      if (ref) ind.evidence = ref;
      return ind;
    });
}

function refOf(m: ListMatch): EvidenceRef | undefined {
  return m.kind === 'sender' || m.kind === 'sender_domain'
    ? { kind: 'header', name: 'from' }
    : undefined;
}
