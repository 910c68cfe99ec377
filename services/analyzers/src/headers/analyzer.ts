import type { AnalyzerAnswerInput, Email } from '@trawl/contracts';
import { displayNameBrands } from '../content/analyzer.ts';
import { type Lexicons, loadLexicons } from '../content/lexicons.ts';
import { normalizeForMatch } from '../content/normalize.ts';
import { type MailView, orgDomain, viewOf } from '../rules/view.ts';
import { type AuthResults, readAuthResults } from '../shared/auth-results.ts';
import { firstHeader } from '../shared/header-values.ts';
import { answerFrom, type Finding } from '../shared/score.ts';
import { findLookalike, mainLabel, type ProtectedName, protectedNames } from '../urls/lookalike.ts';
import { looksRandom } from '../urls/random-domain.ts';
import {
  addressInSubject,
  brokenWords,
  fakeReply,
  generatedLocalPart,
  generatedSubdomain,
  junkSuffix,
  malformedDisplayName,
  unrelatedOrgName,
} from './bulk-signs.ts';
import type { HeadersSettings } from './settings.ts';
import { HEADERS_SYMBOLS } from './symbols.ts';

function ownsBrand(lex: Lexicons, brandId: string, domain: string): boolean {
  const b = lex.brands.find((x) => x.id === brandId);
  if (!b) return false;
  return b.domains.some((d) => domain === d || domain.endsWith(`.${d}`));
}

/** Org domains that legitimately relay for the author: mailing lists, the Sender header. */
function relayDomains(v: MailView): Set<string> {
  const s = new Set<string>();
  const lid = /<([^>]+)>/.exec(v.list_id)?.[1] ?? v.list_id;
  if (lid) s.add(orgDomain(lid.split('.').slice(-3).join('.')));
  if (v.sender_header) s.add(v.sender_header.org_domain);
  return s;
}

/** Whether `domain` is `org` or below it. */
function under(domain: string, org: string): boolean {
  return domain === org || domain.endsWith(`.${org}`);
}

/**
 * Standing of an authenticated sender: DMARC passed at the trusted hop for the From domain, and
 * that domain is one of the organisation's own or the real domain of a well-known brand. A domain
 * an attacker registers passes DMARC too, but it is neither.
 */
function standingOf(
  a: AuthResults,
  fromOrg: string,
  own: readonly string[],
  lex: Lexicons,
): 'own' | 'brand' | undefined {
  if (a.dmarc !== 'pass' || !a.verified || !fromOrg) return undefined;
  if (a.dmarc_from && orgDomain(a.dmarc_from) !== fromOrg) return undefined;
  if (own.some((d) => under(fromOrg, d.toLowerCase()))) return 'own';
  // free-mail and hosting domains belong to brands too, but anyone can sign up for an address there
  if (lex.freeMail.has(fromOrg)) return undefined;
  if (lex.brands.some((b) => b.domains.some((d) => under(fromOrg, d)))) return 'brand';
  return undefined;
}

/** The address in a `List-Post: <mailto:list@host>` value, lower-case. */
function listPostAddress(email: Email): string {
  const lp = firstHeader(email, 'list-post') ?? '';
  const m = /<mailto:([^>?\s]+)/i.exec(lp.slice(0, 1000));
  return m?.[1]?.toLowerCase() ?? '';
}

/**
 * A mailing list's DMARC mitigation: From rewritten to the list's own address (the List-Post
 * address, or an address of the List-Id's domain), the author moved to Reply-To. Recognised only
 * when the trusted hop's authentication does not contradict it: when it recorded DKIM results, the
 * list's domain must have signed (or the ARC chain through the list must hold), and DMARC must not
 * have failed. Returns the list's domain. Everything in it is written by the sender, so it only
 * explains the Reply-To (group `reply_to`, floor 0), never lowers a score by itself.
 */
function listRewrite(email: Email, v: MailView, a: AuthResults): string | undefined {
  if (!v.list_id || !v.from.address) return undefined;
  const lid = (/<([^>]+)>/.exec(v.list_id)?.[1] ?? v.list_id).trim().toLowerCase();
  const post = listPostAddress(email);
  const listOrg = orgDomain(post ? (post.split('@')[1] ?? '') : lid);
  const fromIsList =
    (post !== '' && v.from.address === post) ||
    (listOrg !== '' && (v.from.org_domain === listOrg || orgDomain(lid) === v.from.org_domain));
  if (!fromIsList) return undefined;
  if (a.dmarc === 'fail') return undefined;
  if (a.dkim !== 'none_seen' || a.arc !== 'none_seen') {
    const signed = a.dkim_pass_domains.some((d) => orgDomain(d) === v.from.org_domain);
    if (!signed && a.arc !== 'pass') return undefined;
  }
  return v.from.org_domain;
}

/** Sender names of mail systems and help desks, which lures borrow (word-bounded, lower-case). */
const SYSTEM_NAME_RE =
  /\b(?:mail(?:er)?[ -]?daemon|postmaster|mail delivery|delivery (?:status|failure|system|notification)|mail (?:system|server|admin|administrator|notification|support|service)|e-?mail (?:admin|administrator|support|server|team|service|notification|security)|webmail|voice ?mail|help ?desk|service ?desk|it (?:support|department|service)|system administrator|mailbox)\b/;

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

/** Registrable domains of the visible recipients (the mailbox the message was delivered to). */
function recipientOrgs(v: MailView): Set<string> {
  const s = new Set<string>();
  for (const r of v.to.slice(0, 10)) {
    const d = orgDomain(r.split('@')[1]?.toLowerCase() ?? '');
    if (d.includes('.')) s.add(d);
  }
  return s;
}

const namesCache = new WeakMap<Lexicons, Map<string, ProtectedName[]>>();
/** protectedNames of the lexicon's brands and the organisation, computed once per lexicon. */
function cachedNames(lex: Lexicons, organisationDomains: string[]): ProtectedName[] {
  let m = namesCache.get(lex);
  if (!m) {
    m = new Map();
    namesCache.set(lex, m);
  }
  const key = organisationDomains.join(',');
  let names = m.get(key);
  if (!names) {
    names = protectedNames(lex.brands, organisationDomains);
    m.set(key, names);
  }
  return names;
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

/** Pure header checks of one message. */
export function headerFindings(email: Email, settings: HeadersSettings, lex: Lexicons): Finding[] {
  const v = viewOf(email);
  const out: Finding[] = [];
  const fromOrg = v.from.org_domain;
  const w = settings.weights;

  // 1. explicit authentication failures only; missing results are not evidence
  const a = settings.authserv_ids.length ? readAuthResults(email, settings.authserv_ids) : v.auth;
  if (a.spf === 'fail')
    out.push({ type: 'auth_failure', value: 'SPF fail', symbol: 'spf_fail', weight: w.spf_fail });
  else if (a.spf === 'softfail')
    out.push({
      type: 'auth_failure',
      value: 'SPF softfail',
      symbol: 'spf_softfail',
      weight: w.spf_softfail,
    });
  if (a.dkim === 'fail')
    out.push({
      type: 'auth_failure',
      value: 'DKIM fail',
      symbol: 'dkim_fail',
      weight: w.dkim_fail,
    });
  if (a.dmarc === 'fail')
    out.push({
      type: 'auth_failure',
      value: 'DMARC fail',
      symbol: 'dmarc_fail',
      weight: w.dmarc_fail,
    });
  if (a.arc === 'fail')
    out.push({ type: 'auth_failure', value: 'ARC fail', symbol: 'arc_fail', weight: w.arc_fail });

  // 1b. authenticated mail from a domain with standing (the organisation's own, a brand's real one)
  const standing = standingOf(a, fromOrg, settings.organisation_domains, lex);
  if (standing)
    out.push({
      type: 'sender_authenticated',
      value: `DMARC pass for ${fromOrg}, ${standing === 'own' ? 'one of the organisation’s own domains' : 'a domain of a well-known brand'} (${a.authserv_id || 'trusted hop'})`,
      symbol: standing === 'own' ? 'dmarc_pass_own_domain' : 'dmarc_pass_brand_domain',
      weight: standing === 'own' ? w.dmarc_pass_own_domain : w.dmarc_pass_brand_domain,
    });

  const relays = relayDomains(v);
  const list = listRewrite(email, v, a);
  // 2. reply-to pointing elsewhere
  for (const r of v.reply_to) {
    if (!r.org_domain || r.org_domain === fromOrg || relays.has(r.org_domain)) continue;
    const free = lex.freeMail.has(r.org_domain) || lex.freeMail.has(r.domain);
    out.push({
      type: 'reply_to_mismatch',
      value: `Reply-To ${r.domain} differs from From ${v.from.domain}${free ? ' (free-mail)' : ''}`,
      ...(free && !lex.freeMail.has(fromOrg)
        ? { symbol: 'reply_to_free_mail', weight: w.reply_to_free_mail }
        : { symbol: 'reply_to_mismatch', weight: w.reply_to_mismatch }),
    });
    if (list)
      out.push({
        type: 'mailing_list',
        value: `mailing list ${list} rewrote From to its own address and put the author in Reply-To`,
        symbol: 'list_explains_reply_to',
        weight: w.list_explains_reply_to,
      });
    break;
  }
  // 3. return-path elsewhere: weak (bulk senders use bounce domains)
  const rp = v.return_path;
  if (rp?.org_domain && fromOrg && rp.org_domain !== fromOrg && !relays.has(rp.org_domain)) {
    out.push({
      type: 'return_path_mismatch',
      value: `Return-Path ${rp.domain} differs from From ${v.from.domain}`,
      symbol: 'return_path_mismatch',
      weight: w.return_path_mismatch,
    });
  }

  // 4. display-name spoofing
  const dn = v.from.display_name;
  if (dn) {
    const addrInName = /[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/.exec(dn);
    if (addrInName?.[1]) {
      const shown = orgDomain(addrInName[1].toLowerCase());
      if (shown && fromOrg && shown !== fromOrg) {
        out.push({
          type: 'display_name_spoofing',
          value: `display name shows ${addrInName[0]} but the sender is ${v.from.address}`,
          symbol: 'display_name_address',
          weight: w.display_name_address,
        });
      }
    }
    const brands = displayNameBrands(v, lex);
    const ids = brands.size ? [...brands.keys()] : compactBrands(dn, lex);
    for (const id of ids) {
      if (settings.protected_brands.length && !settings.protected_brands.includes(id)) continue;
      if (ownsBrand(lex, id, v.from.domain)) continue;
      const free = lex.freeMail.has(fromOrg) || lex.freeMail.has(v.from.domain);
      out.push({
        type: 'display_name_spoofing',
        value: `display name names ${id} but the sender domain ${v.from.domain || '(none)'} is not ${id}'s${free ? ' (free-mail)' : ''}`,
        ...(free
          ? { symbol: 'display_name_brand_free_mail', weight: w.display_name_brand_free_mail }
          : { symbol: 'display_name_brand', weight: w.display_name_brand }),
      });
      break;
    }
    for (const org of settings.organisation_names) {
      if (
        org &&
        normalizeForMatch(dn).includes(normalizeForMatch(org)) &&
        !settings.organisation_domains.includes(fromOrg)
      ) {
        out.push({
          type: 'display_name_spoofing',
          value: `display name names the organisation (${org}) but the sender is external`,
          symbol: 'display_name_brand',
          weight: w.display_name_brand,
        });
        break;
      }
    }
  }

  // 4b. who the From header claims to be, beyond brands
  const fromHeader = firstHeader(email, 'from') ?? '';
  // an address inside the quoted display name is not the sender's address
  const unquoted = fromHeader.replace(/"[^"]*"/g, '');
  if (fromHeader.trim() && !unquoted.includes('@')) {
    out.push({
      type: 'suspicious_sender',
      value: `From names no address: ${fromHeader.trim().slice(0, 60)}`,
      symbol: 'from_no_address',
      weight: w.from_no_address,
    });
  } else if (unquoted.includes('@') && malformedFrom(unquoted)) {
    out.push({
      type: 'suspicious_sender',
      value: `From address is malformed: ${unquoted.trim().slice(0, 80)}`,
      symbol: 'from_address_malformed',
      weight: w.from_address_malformed,
    });
  }
  const shownName = dn || (unquoted.includes('@') ? '' : fromHeader);
  const recipientDomains = recipientOrgs(v);
  if (shownName && !v.list_id) {
    const lower = shownName.toLowerCase();
    const named = [...recipientDomains].find((d) => d !== fromOrg && containsWord(lower, d));
    if (named) {
      out.push({
        type: 'display_name_spoofing',
        value: `display name shows the recipient’s domain ${named} but the sender is ${v.from.address || '(none)'}`,
        symbol: 'display_name_recipient_domain',
        weight: w.display_name_recipient_domain,
      });
    }
    // a real delivery report (multipart/report) quotes the bounced message, links and all
    const report = /^\s*multipart\/report\b/i.test(firstHeader(email, 'content-type') ?? '');
    if (
      !report &&
      SYSTEM_NAME_RE.test(lower) &&
      v.urls.some((u) => u.source === 'href' && u.host)
    ) {
      out.push({
        type: 'display_name_spoofing',
        value: `a mail-system sender name (“${shownName.slice(0, 60)}”) on a message with web links`,
        symbol: 'system_notice_name',
        weight: w.system_notice_name,
      });
    }
  }

  // 5. sender domain is a look-alike of a brand or of the organisation
  const names = cachedNames(lex, settings.organisation_domains);
  const look = findLookalike(fromOrg, names);
  if (look) {
    out.push({
      type: look.owner === 'organisation' ? 'internal_domain_lookalike' : 'domain_spoofing',
      value: `sender domain ${fromOrg} looks like ${look.label} (${look.how})`,
      symbol: 'sender_lookalike',
      weight: w.sender_lookalike,
    });
  }
  if (/(^|\.)xn--/.test(v.from.domain)) {
    out.push({
      type: 'homograph_domain',
      value: `sender domain ${v.from.domain} is punycode`,
      symbol: 'sender_punycode',
      weight: w.sender_punycode,
    });
  }

  // 5b. throw-away sender or bounce domains: machine-generated names, high-abuse TLDs
  const senderDomains = new Map<string, string>();
  if (fromOrg) senderDomains.set(fromOrg, 'sender');
  if (rp?.org_domain && !senderDomains.has(rp.org_domain))
    senderDomains.set(rp.org_domain, 'Return-Path');
  let randomDone = false;
  let tldDone = false;
  for (const [d, role] of senderDomains) {
    if (!randomDone && looksRandom(mainLabel(d))) {
      randomDone = true;
      out.push({
        type: 'suspicious_sender',
        value: `${role} domain ${d} looks machine-generated`,
        symbol: 'random_domain',
        weight: w.random_domain,
      });
    }
    const tld = d.split('.').pop() ?? '';
    if (!tldDone && lex.riskyTlds.has(tld)) {
      tldDone = true;
      out.push({
        type: 'risky_tld',
        value: `${role} domain ${d} (.${tld})`,
        symbol: 'risky_tld',
        weight: w.risky_tld,
      });
    }
  }

  // 6. self-addressed: From is the recipient's own address (spoofed extortion / "mailbox" lures)
  const to = v.to.map((x) => x.toLowerCase());
  if (v.from.address && to.length === 1 && to[0] === v.from.address && !list) {
    out.push({
      type: 'domain_spoofing',
      value: 'From is the recipient’s own address',
      symbol: 'self_addressed',
      weight: w.self_addressed,
    });
  }
  // 7. recipient address or mailbox name used as bait in the subject
  const subj = v.subject.toLowerCase().replace(/\[[^\]]*\]/g, ' ');
  for (const r of v.list_id ? [] : to.slice(0, 5)) {
    const local = r.split('@')[0] ?? '';
    if ((r.length > 5 && subj.includes(r)) || (local.length >= 5 && containsWord(subj, local))) {
      out.push({
        type: 'header_anomaly',
        value: 'subject contains the recipient’s address',
        symbol: 'recipient_in_subject',
        weight: w.recipient_in_subject,
      });
      break;
    }
  }

  if (!v.list_id) {
    const named = [...recipientDomains].find((d) => d !== fromOrg && containsWord(subj, d));
    if (named && !out.some((f) => f.symbol === 'recipient_in_subject')) {
      out.push({
        type: 'header_anomaly',
        value: `the subject names the recipient’s domain ${named}`,
        symbol: 'recipient_domain_in_subject',
        weight: w.recipient_domain_in_subject,
      });
    }
  }
  // 8. Message-ID anomalies
  if (!v.message_id) {
    out.push({
      type: 'header_anomaly',
      value: 'no Message-ID',
      symbol: 'message_id_missing',
      weight: w.message_id_missing,
    });
  } else if (!/^<?[^<>@\s]+@[^<>@\s]+>?$/.test(v.message_id.trim())) {
    out.push({
      type: 'header_anomaly',
      value: 'malformed Message-ID',
      symbol: 'message_id_malformed',
      weight: w.message_id_malformed,
    });
  }
  // 9. Date anomalies: Date well after the first (topmost) Received timestamp
  const date = Date.parse(v.date);
  const rec = (email.headers.raw_headers?.received ?? []) as string | string[];
  const firstReceived = Array.isArray(rec) ? rec[0] : rec;
  if (firstReceived && Number.isFinite(date)) {
    const ts = Date.parse(firstReceived.split(';').pop()?.trim() ?? '');
    if (Number.isFinite(ts) && date - ts > 24 * 3600 * 1000) {
      out.push({
        type: 'header_anomaly',
        value: 'Date lies more than a day after delivery',
        symbol: 'date_future',
        weight: w.date_future,
      });
    }
  }
  // 10. bulk-mail tricks in From and Subject
  const junk = junkSuffix(v.subject) ?? (dn ? junkSuffix(dn) : undefined);
  if (junk) {
    out.push({
      type: 'header_anomaly',
      value: `junk token appended to defeat matching: ${junk.slice(0, 40)}`,
      symbol: 'junk_suffix',
      weight: w.junk_suffix,
    });
  }
  const mangled = dn ? malformedDisplayName(dn) : undefined;
  if (mangled) {
    out.push({
      type: 'header_anomaly',
      value: `display name is mangled (${mangled})`,
      symbol: 'display_name_malformed',
      weight: w.display_name_malformed,
    });
  }
  if (brokenWords(v.subject) || (dn && brokenWords(dn))) {
    out.push({
      type: 'text_obfuscation',
      value: 'words cut up by spaces or dots in the subject or sender name',
      symbol: 'broken_words',
      weight: w.broken_words,
    });
  }
  if (!v.list_id && fakeReply(v.subject, v.header_names)) {
    out.push({
      type: 'header_anomaly',
      value: 'subject poses as a reply but the message answers nothing',
      symbol: 'fake_reply',
      weight: w.fake_reply,
    });
  }
  if (dn && !v.list_id && unrelatedOrgName(dn, v.from.address)) {
    out.push({
      type: 'display_name_spoofing',
      value: `organisation name “${dn.slice(0, 60)}” on an address that is not its own (${v.from.address})`,
      symbol: 'unrelated_org_name',
      weight: w.unrelated_org_name,
    });
  }
  if (
    !out.some((f) => f.symbol === 'recipient_in_subject') &&
    addressInSubject(subj, v.from.address)
  ) {
    out.push({
      type: 'header_anomaly',
      value: 'the subject shows an e-mail address',
      symbol: 'address_in_subject',
      weight: w.address_in_subject,
    });
  }
  for (const [host, org] of [
    [v.from.domain, fromOrg],
    [rp?.domain ?? '', rp?.org_domain ?? ''],
  ] as const) {
    const label = generatedSubdomain(host, org);
    if (label) {
      out.push({
        type: 'suspicious_sender',
        value: `sender host ${host} has a generated label (${label})`,
        symbol: 'generated_subdomain',
        weight: w.generated_subdomain,
      });
      break;
    }
  }
  if (v.from.address && !v.list_id && generatedLocalPart(v.from.address)) {
    out.push({
      type: 'suspicious_sender',
      value: `sender mailbox ${v.from.address.split('@')[0]} looks generated`,
      symbol: 'generated_local_part',
      weight: w.generated_local_part,
    });
  }
  return out;
}

export function analyzeHeaders(email: Email, settings: HeadersSettings): AnalyzerAnswerInput {
  const lex = loadLexicons(settings.lexicon_dir);
  const findings = headerFindings(email, settings, lex);
  return answerFrom(findings, {
    base: settings.base_probability,
    threshold: settings.phishing_score_threshold,
    name: 'headers',
    details: { auth: viewOf(email).auth },
    maxLogOdds: 8,
    groups: HEADERS_SYMBOLS,
  });
}
