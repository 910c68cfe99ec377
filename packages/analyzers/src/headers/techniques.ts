/**
 * The header techniques, one function each: `(ctx) => Finding[]` over one message's HeaderContext.
 * headerFindings (analyzer.ts) runs them in the order of HEADER_TECHNIQUES.
 */
import { addressIn } from '../shared/header-values.ts';
import { displayNameBrands } from '../shared/lexicon-hits.ts';
import { brandOwning, type Lexicons } from '../shared/lexicons.ts';
import {
  findLookalike,
  mainLabel,
  type ProtectedName,
  protectedNames,
} from '../shared/lookalike.ts';
import { reportOf } from '../shared/machine-mail.ts';
import { PairMemo } from '../shared/memo.ts';
import { normalizeForMatch } from '../shared/normalize.ts';
import { looksRandom } from '../shared/random-domain.ts';
import { type Finding, finding, one, oneOf } from '../shared/score.ts';
import { skeleton } from '../shared/similarity.ts';
import { orgDomain } from '../shared/view.ts';
import {
  addressInSubject,
  brokenWords,
  disguisedLetters,
  fakeReply,
  generatedLocalPart,
  generatedSubdomain,
  institutionOffDomain,
  junkSuffix,
  malformedDisplayName,
  mixedCaseLocalPart,
  unrelatedOrgName,
} from './bulk-signs.ts';
import type { HeaderContext } from './context.ts';

export type HeaderTechnique = (ctx: HeaderContext) => Finding[];

const NONE: Finding[] = [];

/** Whether `domain` is `org` or below it. */
function under(domain: string, org: string): boolean {
  return domain === org || domain.endsWith(`.${org}`);
}

function ownsBrand(lex: Lexicons, brandId: string, domain: string): boolean {
  const b = lex.brands.find((x) => x.id === brandId);
  if (!b) return false;
  return b.domains.some((d) => domain === d || domain.endsWith(`.${d}`));
}

function isLowerAlnum(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}

/** Whether `word` stands in `s` with no [a-z0-9] right before or after it. */
function containsWord(s: string, word: string): boolean {
  for (let at = s.indexOf(word); at !== -1; at = s.indexOf(word, at + 1)) {
    const end = at + word.length;
    if (
      (at === 0 || !isLowerAlnum(s.charCodeAt(at - 1))) &&
      (end === s.length || !isLowerAlnum(s.charCodeAt(end)))
    )
      return true;
  }
  return false;
}

/** The From address as written (the view lower-cases it; the case of its letters is evidence). */
function writtenAddress({ v, unquoted }: HeaderContext): string {
  const at = unquoted.toLowerCase().lastIndexOf(v.from.address);
  return at === -1 ? v.from.address : unquoted.slice(at, at + v.from.address.length);
}

// 1. explicit authentication failures only; missing results are not evidence
export const authFailureFindings: HeaderTechnique = ({ auth: a, w }) => {
  const out: Finding[] = [];
  if (a.spf === 'fail') out.push(finding('auth_failure', 'SPF fail', 'spf_fail', w.spf_fail));
  else if (a.spf === 'softfail')
    out.push(finding('auth_failure', 'SPF softfail', 'spf_softfail', w.spf_softfail));
  if (a.dkim === 'fail') out.push(finding('auth_failure', 'DKIM fail', 'dkim_fail', w.dkim_fail));
  if (a.dmarc === 'fail')
    out.push(finding('auth_failure', 'DMARC fail', 'dmarc_fail', w.dmarc_fail));
  if (a.arc === 'fail') out.push(finding('auth_failure', 'ARC fail', 'arc_fail', w.arc_fail));
  return out;
};

/** Whether the From domain is one of the organisation's own or a brand's real one (whatever auth says). */
function standingDomain(ctx: HeaderContext): boolean {
  const { fromOrg, lex } = ctx;
  if (!fromOrg || lex.freeMail.has(fromOrg)) return false;
  if (ctx.settings.organisation_domains.some((d) => under(fromOrg, d.toLowerCase()))) return true;
  return brandOwning(lex.brands, fromOrg) !== undefined;
}

// 1c. a mailing list re-signed the message: it explains the author's broken DKIM and DMARC
export const listResignedFindings: HeaderTechnique = (ctx) => {
  const { auth: a, listSigner, w } = ctx;
  if (!listSigner || (a.dkim !== 'fail' && a.dmarc !== 'fail')) return NONE;
  if (standingDomain(ctx)) return NONE;
  return oneOf(
    w,
    'list_explains_auth_failure',
    'mailing_list',
    `mailing list signed by ${listSigner} relayed the author’s message; it explains the author’s broken ${a.dmarc === 'fail' ? 'DMARC' : 'DKIM'}`,
  );
};

// 1a. the organisation's (or the recipient's) own domain in From, failing its own receiver's checks
export const ownDomainUnauthenticatedFindings: HeaderTechnique = (ctx) => {
  const { auth: a, fromOrg, recipientDomains, lex, w } = ctx;
  if (!fromOrg || lex.freeMail.has(fromOrg)) return NONE;
  if (a.spf !== 'fail' && a.spf !== 'softfail' && a.dmarc !== 'fail') return NONE;
  const own =
    ctx.settings.organisation_domains.some((d) => under(fromOrg, d.toLowerCase())) ||
    recipientDomains.has(fromOrg);
  if (!own) return NONE;
  return oneOf(
    w,
    'own_domain_unauthenticated',
    'domain_spoofing',
    `From is in the recipient’s own domain ${fromOrg} but fails ${a.dmarc === 'fail' ? 'DMARC' : 'SPF'} at the receiving server`,
  );
};

/**
 * Standing of an authenticated sender: DMARC passed at the trusted hop for the From domain, and
 * that domain is one of the organisation's own or the real domain of a well-known brand. A domain
 * an attacker registers passes DMARC too, but it is neither.
 */
function standingOf(ctx: HeaderContext): 'own' | 'brand' | undefined {
  const { auth: a, fromOrg, lex } = ctx;
  const own = ctx.settings.organisation_domains;
  if (a.dmarc !== 'pass' || !a.verified || !fromOrg) return undefined;
  if (a.dmarc_from && orgDomain(a.dmarc_from) !== fromOrg) return undefined;
  if (own.some((d) => under(fromOrg, d.toLowerCase()))) return 'own';
  // free-mail and hosting domains belong to brands too, but anyone can sign up for an address there
  if (lex.freeMail.has(fromOrg)) return undefined;
  // a platform that sends for anyone (invoices, shares, invitations) vouches for itself, not for
  // what its users wrote
  const brand = brandOwning(lex.brands, fromOrg);
  if (brand && !brand.sends_for_anyone) return 'brand';
  return undefined;
}

// 1b. authenticated mail from a domain with standing (the organisation's own, a brand's real one)
export const standingFindings: HeaderTechnique = (ctx) => {
  const standing = standingOf(ctx);
  if (!standing) return NONE;
  const { auth: a, fromOrg, w } = ctx;
  return one(
    'sender_authenticated',
    `DMARC pass for ${fromOrg}, ${standing === 'own' ? 'one of the organisation’s own domains' : 'a domain of a well-known brand'} (${a.authserv_id || 'trusted hop'})`,
    standing === 'own' ? 'dmarc_pass_own_domain' : 'dmarc_pass_brand_domain',
    standing === 'own' ? w.dmarc_pass_own_domain : w.dmarc_pass_brand_domain,
  );
};

// 2. reply-to pointing elsewhere (explained when a mailing list rewrote From)
export const replyToFindings: HeaderTechnique = ({
  v,
  lex,
  fromOrg,
  relays,
  list,
  onBehalf,
  w,
}) => {
  for (const r of v.reply_to) {
    if (!r.org_domain || relays.has(r.org_domain)) continue;
    // on free mail the mailbox is the sender, not the domain: replies to another mailbox of the
    // same provider go to someone else (the advance-fee "write to my private address")
    const otherMailbox =
      r.org_domain === fromOrg &&
      lex.freeMail.has(fromOrg) &&
      r.address.toLowerCase() !== v.from.address.toLowerCase();
    if (r.org_domain === fromOrg && !otherMailbox) continue;
    if (onBehalf && r.address === onBehalf) continue; // said by the display name already
    const free = lex.freeMail.has(r.org_domain) || lex.freeMail.has(r.domain);
    const out: Finding[] = [
      {
        type: 'reply_to_mismatch',
        value: otherMailbox
          ? `Reply-To ${r.address} is another free-mail mailbox than From ${v.from.address}`
          : `Reply-To ${r.domain} differs from From ${v.from.domain}${free ? ' (free-mail)' : ''}`,
        ...(free && !lex.freeMail.has(fromOrg)
          ? { symbol: 'reply_to_free_mail', weight: w.reply_to_free_mail }
          : { symbol: 'reply_to_mismatch', weight: w.reply_to_mismatch }),
      },
    ];
    if (list)
      out.push(
        finding(
          'mailing_list',
          `mailing list ${list} rewrote From to its own address and put the author in Reply-To`,
          'list_explains_reply_to',
          w.list_explains_reply_to,
        ),
      );
    return out;
  }
  return NONE;
};

// 3. return-path elsewhere: weak (bulk senders use bounce domains)
export const returnPathFindings: HeaderTechnique = ({ v, fromOrg, relays, w }) => {
  const rp = v.return_path;
  if (!rp?.org_domain || !fromOrg || rp.org_domain === fromOrg || relays.has(rp.org_domain))
    return NONE;
  return oneOf(
    w,
    'return_path_mismatch',
    'return_path_mismatch',
    `Return-Path ${rp.domain} differs from From ${v.from.domain}`,
  );
};

// 4. display-name spoofing: an address in the name whose domain is not the sender's
export const displayNameAddressFindings: HeaderTechnique = ({ v, dn, fromOrg, onBehalf, w }) => {
  if (!dn) return NONE;
  const addrInName = addressIn(dn);
  if (!addrInName) return NONE;
  const shown = orgDomain(addrInName[1].toLowerCase());
  if (!shown || !fromOrg || shown === fromOrg) return NONE;
  // a service sending for the shown address, replies going to it: one fact, counted once
  if (onBehalf)
    return oneOf(
      w,
      'on_behalf_of',
      'display_name_spoofing',
      `sent by ${v.from.address} on behalf of ${onBehalf} (display name and Reply-To)`,
    );
  return oneOf(
    w,
    'display_name_address',
    'display_name_spoofing',
    `display name shows ${addrInName[0]} but the sender is ${v.from.address}`,
  );
};

const compactNames = new WeakMap<Lexicons, [string, string][]>();
/**
 * Brands named in a display name written without its spaces or with dots ("WellsFargo Online",
 * "USAA.Web.Services"), which word matching misses: letters and digits only, names of six or more.
 */
function compactBrands(displayName: string, lex: Lexicons): string[] {
  let names = compactNames.get(lex);
  if (!names) {
    names = [];
    for (const b of lex.brands)
      for (const n of b.names) {
        const c = n.toLowerCase().replace(/[^a-z0-9]/g, '');
        if (c.length >= 6) names.push([c, b.id]);
      }
    compactNames.set(lex, names);
  }
  const c = displayName
    .slice(0, 200)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
  const out: string[] = [];
  for (const [n, id] of names) if (c.includes(n) && !out.includes(id)) out.push(id);
  return out;
}

// 4. display-name spoofing: a brand's name on a sender domain that is not the brand's
export const displayNameBrandFindings: HeaderTechnique = ({ v, dn, lex, fromOrg, settings, w }) => {
  if (!dn) return NONE;
  const brands = displayNameBrands(v, lex);
  const ids = brands.size ? [...brands.keys()] : compactBrands(dn, lex);
  for (const id of ids) {
    if (settings.protected_brands.length && !settings.protected_brands.includes(id)) continue;
    if (ownsBrand(lex, id, v.from.domain)) continue;
    const free = lex.freeMail.has(fromOrg) || lex.freeMail.has(v.from.domain);
    return [
      {
        type: 'display_name_spoofing',
        value: `display name names ${id} but the sender domain ${v.from.domain || '(none)'} is not ${id}'s${free ? ' (free-mail)' : ''}`,
        ...(free
          ? { symbol: 'display_name_brand_free_mail', weight: w.display_name_brand_free_mail }
          : { symbol: 'display_name_brand', weight: w.display_name_brand }),
      },
    ];
  }
  return NONE;
};

// 4. display-name spoofing: a bank's or a carrier's name on a domain that is not theirs
export const displayNameInstitutionFindings: HeaderTechnique = ({ v, dn, list, w }) => {
  // a list that rewrote From (its own domain authenticated) puts the author's name there
  if (!dn || list) return NONE;
  const name = institutionOffDomain(dn, v.from.domain);
  if (!name) return NONE;
  return oneOf(
    w,
    'display_name_institution',
    'display_name_spoofing',
    `display name “${name.slice(0, 60)}” is a bank's or a carrier's, the sender domain ${v.from.domain || '(none)'} is not theirs`,
  );
};

// 4. display-name spoofing: the organisation's own name on an external sender
export const organisationNameFindings: HeaderTechnique = ({ dn, fromOrg, settings, w }) => {
  if (!dn) return NONE;
  for (const org of settings.organisation_names) {
    if (
      org &&
      normalizeForMatch(dn).includes(normalizeForMatch(org)) &&
      !settings.organisation_domains.includes(fromOrg)
    ) {
      return oneOf(
        w,
        'display_name_brand',
        'display_name_spoofing',
        `display name names the organisation (${org}) but the sender is external`,
      );
    }
  }
  return NONE;
};

/**
 * Whether the address part of a From header (quoted names removed) cannot be a real sender: its
 * domain has no top-level domain or ends with a dot, or the address holds a quote.
 */
function malformedFrom(unquoted: string): boolean {
  const v = unquoted.slice(0, 1000);
  const angle = v.lastIndexOf('<');
  const addr = (
    angle === -1
      ? v
      : v.slice(angle + 1, v.indexOf('>', angle) === -1 ? undefined : v.indexOf('>', angle))
  ).trim();
  const at = addr.lastIndexOf('@');
  if (at <= 0) return false;
  const domain = addr.slice(at + 1);
  if (addr.includes("'") || addr.includes('"')) return true;
  if (domain.startsWith('[')) return false; // an address literal
  return !domain.includes('.') || domain.endsWith('.') || domain.includes('..');
}

// 4b. who the From header claims to be: no address at all, or one that cannot be real
export const fromAddressFindings: HeaderTechnique = ({ fromHeader, unquoted, w }) => {
  if (fromHeader.trim() && !unquoted.includes('@'))
    return oneOf(
      w,
      'from_no_address',
      'suspicious_sender',
      `From names no address: ${fromHeader.trim().slice(0, 60)}`,
    );
  if (unquoted.includes('@') && malformedFrom(unquoted))
    return oneOf(
      w,
      'from_address_malformed',
      'suspicious_sender',
      `From address is malformed: ${unquoted.trim().slice(0, 80)}`,
    );
  return NONE;
};

/** The name the From header shows: the display name, or the whole header when it has no address. */
function shownName(ctx: HeaderContext): string {
  return ctx.dn || (ctx.unquoted.includes('@') ? '' : ctx.fromHeader);
}

// 4b. the recipient's own domain shown as the sender's name
export const displayNameRecipientFindings: HeaderTechnique = (ctx) => {
  const { v, fromOrg, recipientDomains, w } = ctx;
  const shown = shownName(ctx);
  if (!shown || ctx.authList) return NONE;
  const lower = shown.toLowerCase();
  const named = [...recipientDomains].find((d) => d !== fromOrg && containsWord(lower, d));
  if (!named) return NONE;
  return oneOf(
    w,
    'display_name_recipient_domain',
    'display_name_spoofing',
    `display name shows the recipient’s domain ${named} but the sender is ${v.from.address || '(none)'}`,
  );
};

/** Sender names of mail systems and help desks, which lures borrow (word-bounded, lower-case). */
const SYSTEM_NAME_RE =
  /\b(?:mail(?:er)?[ -]?daemon|postmaster|mail delivery|delivery (?:status|failure|system|notification)|mail (?:system|server|admin|administrator|notification|support|service)|e-?mail (?:admin|administrator|support|server|team|service|notification|security)|webmail|voice ?mail|help ?desk|service ?desk|it (?:support|department|service)|system administrator|mailbox)\b/;

// 4b. a mail-system or help-desk sender name on a message with web links
export const systemNameFindings: HeaderTechnique = (ctx) => {
  const { v, w } = ctx;
  const shown = shownName(ctx);
  if (!shown || ctx.authList) return NONE;
  // a delivery report recognised by its structure (whose links are its reporter's own)
  if (
    reportOf(v, ctx.lex) ||
    !SYSTEM_NAME_RE.test(shown.toLowerCase()) ||
    !v.urls.some((u) => u.source === 'href' && u.host)
  )
    return NONE;
  return oneOf(
    w,
    'system_notice_name',
    'display_name_spoofing',
    `a mail-system sender name (“${shown.slice(0, 60)}”) on a message with web links`,
  );
};

const namesCache = new PairMemo<Lexicons, string, ProtectedName[]>();
/** protectedNames of the lexicon's brands and the organisation, computed once per lexicon. */
function cachedNames(lex: Lexicons, organisationDomains: string[]): ProtectedName[] {
  return namesCache.get(lex, organisationDomains.join(','), () =>
    protectedNames(lex.brands, organisationDomains),
  );
}

// 5. sender domain is a look-alike of a brand or of the organisation
export const senderLookalikeFindings: HeaderTechnique = ({ lex, settings, fromOrg, w }) => {
  // a mail provider's own domain is a known one, nobody's look-alike
  if (lex.freeMail.has(fromOrg)) return NONE;
  const look = findLookalike(fromOrg, cachedNames(lex, settings.organisation_domains));
  if (!look) return NONE;
  return one(
    look.owner === 'organisation' ? 'internal_domain_lookalike' : 'domain_spoofing',
    `sender domain ${fromOrg} looks like ${look.label} (${look.how})`,
    'sender_lookalike',
    w.sender_lookalike,
  );
};

// 5. sender domain in punycode
export const senderPunycodeFindings: HeaderTechnique = ({ v, w }) => {
  if (!/(^|\.)xn--/.test(v.from.domain)) return NONE;
  return oneOf(
    w,
    'sender_punycode',
    'homograph_domain',
    `sender domain ${v.from.domain} is punycode`,
  );
};

// 5b. throw-away sender or bounce domains: machine-generated names, high-abuse TLDs
export const throwawayDomainFindings: HeaderTechnique = ({ v, lex, fromOrg, w }) => {
  const out: Finding[] = [];
  const rp = v.return_path;
  const senderDomains = new Map<string, string>();
  if (fromOrg) senderDomains.set(fromOrg, 'sender');
  if (rp?.org_domain && !senderDomains.has(rp.org_domain))
    senderDomains.set(rp.org_domain, 'Return-Path');
  let randomDone = false;
  let tldDone = false;
  for (const [d, role] of senderDomains) {
    if (!randomDone && looksRandom(mainLabel(d))) {
      randomDone = true;
      out.push(
        finding(
          'suspicious_sender',
          `${role} domain ${d} looks machine-generated`,
          'random_domain',
          w.random_domain,
        ),
      );
    }
    const tld = d.split('.').pop() ?? '';
    if (!tldDone && lex.riskyTlds.has(tld)) {
      tldDone = true;
      out.push(finding('risky_tld', `${role} domain ${d} (.${tld})`, 'risky_tld', w.risky_tld));
    }
  }
  return out;
};

// 6. self-addressed: From is the recipient's own address (spoofed extortion / "mailbox" lures)
export const selfAddressedFindings: HeaderTechnique = ({ v, to, list, w }) => {
  if (!v.from.address || to.length !== 1 || to[0] !== v.from.address || list) return NONE;
  return oneOf(w, 'self_addressed', 'domain_spoofing', 'From is the recipient’s own address');
};

// 7. recipient address or mailbox name used as bait in the subject
export const recipientInSubjectFindings: HeaderTechnique = ({ authList, to, subj, w }) => {
  for (const r of authList ? [] : to.slice(0, 5)) {
    const local = r.split('@')[0] ?? '';
    if ((r.length > 5 && subj.includes(r)) || (local.length >= 5 && containsWord(subj, local)))
      return oneOf(
        w,
        'recipient_in_subject',
        'header_anomaly',
        'subject contains the recipient’s address',
      );
  }
  return NONE;
};

const recipientInSubject = (ctx: HeaderContext) =>
  ctx.found.some((f) => f.symbol === 'recipient_in_subject');

/**
 * A DMARC or TLS report's subject names the reported domain (the recipient's) and a report id
 * shaped like an address, as RFC 7489 and RFC 8460 ask: its own wording, not bait.
 */
const reportSubject = ({ v, lex }: HeaderContext) => {
  const kind = reportOf(v, lex)?.kind;
  return kind === 'dmarc_report' || kind === 'tls_report';
};

// 7. the recipient's domain named in the subject (unless the address itself is)
export const recipientDomainInSubjectFindings: HeaderTechnique = (ctx) => {
  const { recipientDomains, fromOrg, subj, w } = ctx;
  if (ctx.authList || reportSubject(ctx)) return NONE;
  const named = [...recipientDomains].find((d) => d !== fromOrg && containsWord(subj, d));
  if (!named || recipientInSubject(ctx)) return NONE;
  return oneOf(
    w,
    'recipient_domain_in_subject',
    'header_anomaly',
    `the subject names the recipient’s domain ${named}`,
  );
};

// 8. Message-ID anomalies
export const messageIdFindings: HeaderTechnique = ({ v, w }) => {
  if (!v.message_id) return oneOf(w, 'message_id_missing', 'header_anomaly', 'no Message-ID');
  if (!/^<?[^<>@\s]+@[^<>@\s]+>?$/.test(v.message_id.trim()))
    return oneOf(w, 'message_id_malformed', 'header_anomaly', 'malformed Message-ID');
  return NONE;
};

// 9. Date anomalies: Date well after the first (topmost) Received timestamp
export const dateFindings: HeaderTechnique = ({ email, v, w }) => {
  const date = Date.parse(v.date);
  const rec = (email.headers.raw_headers?.received ?? []) as string | string[];
  const firstReceived = Array.isArray(rec) ? rec[0] : rec;
  if (!firstReceived || !Number.isFinite(date)) return NONE;
  const ts = Date.parse(firstReceived.split(';').pop()?.trim() ?? '');
  if (!Number.isFinite(ts) || date - ts <= 24 * 3600 * 1000) return NONE;
  return oneOf(w, 'date_future', 'header_anomaly', 'Date lies more than a day after delivery');
};

// 10. bulk-mail tricks in From and Subject: a junk token appended to defeat matching
export const junkSuffixFindings: HeaderTechnique = ({ v, dn, w }) => {
  const junk = junkSuffix(v.subject) ?? (dn ? junkSuffix(dn) : undefined);
  if (!junk) return NONE;
  return oneOf(
    w,
    'junk_suffix',
    'header_anomaly',
    `junk token appended to defeat matching: ${junk.slice(0, 40)}`,
  );
};

// 10. a mangled or stuffed display name
export const malformedDisplayNameFindings: HeaderTechnique = ({ dn, w }) => {
  const mangled = dn ? malformedDisplayName(dn) : undefined;
  if (!mangled) return NONE;
  return oneOf(
    w,
    'display_name_malformed',
    'header_anomaly',
    `display name is mangled (${mangled})`,
  );
};

// 10. words cut up by spaces or dots
/** Brand names of one word (3+ letters) by their look-alike skeleton, per lexicon. */
const brandSkeletons = new WeakMap<Lexicons, Map<string, { id: string; name: string }>>();

function brandsBySkeleton(lex: Lexicons): Map<string, { id: string; name: string }> {
  let m = brandSkeletons.get(lex);
  if (m) return m;
  m = new Map();
  for (const b of lex.brands)
    for (const name of [...b.names, ...b.case_names])
      if (name.length >= 3 && /^[\p{L}\p{N}]+$/u.test(name))
        m.set(skeleton(name), { id: b.id, name });
  brandSkeletons.set(lex, m);
  return m;
}

// a brand's name spelled with look-alike letters or digits ("lRS", "PayPaI", "Amaz0n")
export const disguisedBrandFindings: HeaderTechnique = ({ v, dn, lex, w }) => {
  const byShape = brandsBySkeleton(lex);
  for (const text of [v.subject.slice(0, 300), dn.slice(0, 200)]) {
    for (const word of text.split(/[^\p{L}\p{N}]+/u)) {
      if (word.length < 3 || word.length > 24 || !disguisedLetters(word)) continue;
      const brand = byShape.get(skeleton(word));
      if (!brand || brand.name.toLowerCase() === word.toLowerCase()) continue;
      return oneOf(
        w,
        'disguised_brand',
        'display_name_spoofing',
        `“${word}” spells the brand ${brand.id} with look-alike characters`,
      );
    }
  }
  return NONE;
};

export const brokenWordsFindings: HeaderTechnique = ({ v, dn, w }) => {
  if (!brokenWords(v.subject) && !(dn && brokenWords(dn))) return NONE;
  return oneOf(
    w,
    'broken_words',
    'text_obfuscation',
    'words cut up by spaces or dots in the subject or sender name',
  );
};

// 10. "Re:" on a message that answers nothing
export const fakeReplyFindings: HeaderTechnique = ({ v, authList, w }) => {
  if (authList || !fakeReply(v.subject, v.header_names)) return NONE;
  return oneOf(
    w,
    'fake_reply',
    'header_anomaly',
    'subject poses as a reply but the message answers nothing',
  );
};

// 10. an organisation's name on a role address that is not its own
export const unrelatedOrgNameFindings: HeaderTechnique = (ctx) => {
  const { v, dn, w } = ctx;
  if (!dn || ctx.authList) return NONE;
  // a mailbox name of random-case letters is no organisation's, as a role address is not a person's
  const generated = mixedCaseLocalPart(writtenAddress(ctx).split('@')[0] ?? '');
  if (!unrelatedOrgName(dn, v.from.address, generated)) return NONE;
  return oneOf(
    w,
    'unrelated_org_name',
    'display_name_spoofing',
    `organisation name “${dn.slice(0, 60)}” on an address that is not its own (${v.from.address})`,
  );
};

// 10. an e-mail address shown in the subject (unless it is the recipient's, counted above)
export const addressInSubjectFindings: HeaderTechnique = (ctx) => {
  const { v, subj, w } = ctx;
  if (recipientInSubject(ctx) || reportSubject(ctx) || !addressInSubject(subj, v.from.address))
    return NONE;
  return oneOf(w, 'address_in_subject', 'header_anomaly', 'the subject shows an e-mail address');
};

// 10. a generated label below the sender's or the bounce domain
export const generatedSubdomainFindings: HeaderTechnique = ({ v, fromOrg, w }) => {
  const rp = v.return_path;
  for (const [host, org] of [
    [v.from.domain, fromOrg],
    [rp?.domain ?? '', rp?.org_domain ?? ''],
  ] as const) {
    const label = generatedSubdomain(host, org);
    if (label)
      return oneOf(
        w,
        'generated_subdomain',
        'suspicious_sender',
        `sender host ${host} has a generated label (${label})`,
      );
  }
  return NONE;
};

// 10. a sender mailbox name that looks generated
export const generatedLocalPartFindings: HeaderTechnique = (ctx) => {
  const { v, w } = ctx;
  if (!v.from.address || ctx.authList) return NONE;
  if (!generatedLocalPart(writtenAddress(ctx))) return NONE;
  return oneOf(
    w,
    'generated_local_part',
    'suspicious_sender',
    `sender mailbox ${v.from.address.split('@')[0]} looks generated`,
  );
};
