import type { Email } from '@trawl/contracts';
import { viewBrands, viewHits } from '../content/analyzer.ts';
import { LANGUAGE_CATEGORIES, type Lexicons } from '../content/lexicons.ts';
import { type PartyView, viewOf } from './view.ts';

function inSet(set: Set<string>, host: string, domain: string): boolean {
  if (set.has(domain) || set.has(host)) return true;
  const parts = host.split('.');
  for (let i = 1; i < parts.length - 1; i++) if (set.has(parts.slice(i).join('.'))) return true;
  return false;
}

const EMPTY_PARTY: PartyView = { address: '', domain: '', org_domain: '', display_name: '' };

/**
 * The normalised view CEL rules see as `m` (documented in docs/analyzers.md). Plain data only:
 * strings, numbers, booleans, lists and maps; every field always present.
 */
export function ruleView(email: Email, lex: Lexicons): Record<string, unknown> {
  const v = viewOf(email);
  const free = (p: PartyView) => lex.freeMail.has(p.org_domain) || lex.freeMail.has(p.domain);
  const party = (p: PartyView) => ({ ...p, is_free_mail: p.domain ? free(p) : false });
  const hits = viewHits(v, lex, []);
  const lexicon: Record<string, number> = {};
  const subjectLexicon: Record<string, number> = {};
  for (const c of LANGUAGE_CATEGORIES) {
    lexicon[c] = new Set([...(hits.subject[c] ?? []), ...(hits.body[c] ?? [])]).size;
    subjectLexicon[c] = hits.subject[c]?.length ?? 0;
  }
  const named = viewBrands(v, lex);
  const brands = [
    ...new Set([...named.subject.keys(), ...named.displayName.keys(), ...named.body.keys()]),
  ];
  const raw = email.headers.raw_headers ?? {};
  return {
    from: party(v.from),
    reply_to: v.reply_to.map(party),
    return_path: party(v.return_path ?? EMPTY_PARTY),
    to: v.to,
    subject: v.subject,
    text: v.text.slice(0, 20_000),
    text_length: v.text.length,
    has_html: v.has_html,
    language: v.language,
    urls: v.urls.slice(0, 200).map((u) => ({
      ...u,
      is_shortener: lex.shorteners.has(u.domain) || lex.shorteners.has(u.host),
      is_free_hosting: u.host ? inSet(lex.freeHosting, u.host, u.domain) : false,
      is_risky_tld: u.tld ? lex.riskyTlds.has(u.tld.split('.').pop() ?? u.tld) : false,
      same_org_as_sender: u.domain !== '' && u.domain === v.from.org_domain,
    })),
    link_domains: [
      ...new Set(
        v.urls
          .filter((u) => u.source === 'href')
          .map((u) => u.domain)
          .filter(Boolean),
      ),
    ],
    attachments: v.attachments.map(({ bytes: _b, ...a }) => ({
      ...a,
      extension: a.extensions[0] ?? '',
    })),
    auth: { spf: v.auth.spf, dkim: v.auth.dkim, dmarc: v.auth.dmarc, arc: v.auth.arc },
    message_id: v.message_id,
    message_id_domain: v.message_id_domain,
    list_id: v.list_id,
    has_list_unsubscribe: raw['list-unsubscribe'] !== undefined,
    header_names: v.header_names,
    lexicon,
    subject_lexicon: subjectLexicon,
    brands,
  };
}
