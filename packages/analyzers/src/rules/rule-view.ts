import type { Email } from '@trawl/contracts';
import { viewBrands, viewHits } from '../shared/lexicon-hits.ts';
import { hostInList, LANGUAGE_CATEGORIES, type Lexicons } from '../shared/lexicons.ts';
import { ownDomainVouched } from '../shared/signed-headers.ts';
import { type AttachmentView, type PartyView, type UrlView, viewOf } from '../shared/view.ts';

const EMPTY_PARTY: PartyView = { address: '', domain: '', org_domain: '', display_name: '' };

// Object literals with every field written out (no spreads): one shape per kind, built fast.

function ruleParty(p: PartyView, lex: Lexicons) {
  return {
    address: p.address,
    domain: p.domain,
    org_domain: p.org_domain,
    display_name: p.display_name,
    is_free_mail: p.domain ? lex.freeMail.has(p.org_domain) || lex.freeMail.has(p.domain) : false,
  };
}

function ruleUrl(u: UrlView, lex: Lexicons, senderOrg: string, ownVouched: boolean) {
  return {
    url: u.url,
    scheme: u.scheme,
    host: u.host,
    domain: u.domain,
    tld: u.tld,
    is_ip: u.is_ip,
    private_ip: u.private_ip,
    source: u.source,
    anchor_text: u.anchor_text,
    anchor_domain: u.anchor_domain,
    hidden: u.hidden,
    is_image: u.is_image,
    form_has_password: u.form_has_password,
    is_shortener: lex.shorteners.has(u.domain) || lex.shorteners.has(u.host),
    is_free_hosting: u.host ? hostInList(lex.freeHosting, u.host, u.domain) : false,
    is_risky_tld: u.tld ? lex.riskyTlds.has(u.tld.slice(u.tld.lastIndexOf('.') + 1)) : false,
    same_org_as_sender: u.domain !== '' && u.domain === senderOrg,
    // a link to the sender's domain is anyone's to write: the sender's only when that domain signed
    sender_vouched: u.domain !== '' && u.domain === senderOrg && ownVouched,
  };
}

/** An attachment without its bytes, plus its last extension. */
function ruleAttachment(a: AttachmentView) {
  return {
    filename: a.filename,
    extensions: a.extensions,
    content_type: a.content_type,
    size: a.size,
    kind: a.kind,
    detected_type: a.detected_type,
    has_macros: a.has_macros,
    archive_entries: a.archive_entries,
    encrypted: a.encrypted,
    html_scripts: a.html_scripts,
    html_forms: a.html_forms,
    html_password_inputs: a.html_password_inputs,
    pdf_flags: a.pdf_flags,
    extension: a.extensions[0] ?? '',
  };
}

/**
 * The normalised view CEL rules see as `m` (documented in docs/analyzers.md). Plain data only:
 * strings, numbers, booleans, lists and maps; every field always present.
 */
export function ruleView(email: Email, lex: Lexicons): Record<string, unknown> {
  const v = viewOf(email);
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
  const senderOrg = v.from.org_domain;
  const urlCount = Math.min(v.urls.length, 200);
  const urls = new Array(urlCount);
  const ownVouched = ownDomainVouched(v.auth, senderOrg);
  for (let i = 0; i < urlCount; i++) urls[i] = ruleUrl(v.urls[i]!, lex, senderOrg, ownVouched);
  const linkDomains = new Set<string>();
  for (const u of v.urls) if (u.source === 'href' && u.domain) linkDomains.add(u.domain);
  const replyTo = new Array(v.reply_to.length);
  for (let i = 0; i < v.reply_to.length; i++) replyTo[i] = ruleParty(v.reply_to[i]!, lex);
  const attachments = new Array(v.attachments.length);
  for (let i = 0; i < v.attachments.length; i++) attachments[i] = ruleAttachment(v.attachments[i]!);
  const raw = email.headers.raw_headers ?? {};
  return {
    from: ruleParty(v.from, lex),
    reply_to: replyTo,
    return_path: ruleParty(v.return_path ?? EMPTY_PARTY, lex),
    to: v.to,
    subject: v.subject,
    text: v.text.length > 20_000 ? v.text.slice(0, 20_000) : v.text,
    text_length: v.text.length,
    has_html: v.has_html,
    language: v.language,
    urls,
    link_domains: [...linkDomains],
    attachments,
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
