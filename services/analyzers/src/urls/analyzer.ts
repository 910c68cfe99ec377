import { domainToUnicode } from 'node:url';
import type { AnalyzerAnswerInput, Email } from '@trawl/contracts';
import { getDomain } from 'tldts';
import { hostInList, type Lexicons, loadLexicons } from '../content/lexicons.ts';
import { type UrlView, viewOf } from '../rules/view.ts';
import { answerFrom, type Finding } from '../shared/score.ts';
import {
  brandInSubdomain,
  findLookalike,
  mainLabel,
  type ProtectedName,
  protectedNames,
} from './lookalike.ts';
import { looksRandom } from './random-domain.ts';
import type { UrlsSettings } from './settings.ts';
import { URLS_SYMBOLS } from './symbols.ts';

function unicodeMixedScript(host: string): boolean {
  const u = toUnicode(host);
  return u
    .split('.')
    .some((l) => /\p{Script=Latin}/u.test(l) && /[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(l));
}

function toUnicode(h: string): string {
  try {
    return domainToUnicode(h) || h;
  } catch {
    return h;
  }
}

/** What urlFindings derives from the lexicons and the settings, once per settings object. */
interface UrlTables {
  lex: Lexicons;
  names: ProtectedName[];
  shorteners: Set<string>;
  risky: Set<string>;
}

const brandCache = new WeakMap<Lexicons, Map<string, ProtectedName[]>>();
function namesFor(lex: Lexicons, s: UrlsSettings): ProtectedName[] {
  let m = brandCache.get(lex);
  if (!m) {
    m = new Map();
    brandCache.set(lex, m);
  }
  const key = `${s.protected_brands.join(',')}|${s.organisation_domains.join(',')}`;
  let names = m.get(key);
  if (!names) {
    const brands = s.protected_brands.length
      ? lex.brands.filter((b) => s.protected_brands.includes(b.id))
      : lex.brands;
    names = protectedNames(brands, s.organisation_domains);
    m.set(key, names);
  }
  return names;
}

const tableCache = new WeakMap<UrlsSettings, UrlTables>();
function tablesFor(lex: Lexicons, s: UrlsSettings): UrlTables {
  let t = tableCache.get(s);
  if (!t || t.lex !== lex) {
    t = {
      lex,
      names: namesFor(lex, s),
      shorteners: new Set([...lex.shorteners, ...s.url_shorteners.map((x) => x.toLowerCase())]),
      risky: new Set([
        ...lex.riskyTlds,
        ...s.risky_tlds.map((x) => x.toLowerCase().replace(/^\./, '')),
      ]),
    };
    tableCache.set(s, t);
  }
  return t;
}

/** Whether the authority part of a URL (after `scheme://`, up to `/`, `?` or `#`) has an `@`. */
function authorityHasAt(url: string): boolean {
  const start = /^[a-z]+:\/\//i.exec(url)?.[0].length ?? 0;
  const at = url.indexOf('@', start);
  if (at === -1) return false;
  for (let i = start; i < at; i++) {
    const c = url.charCodeAt(i);
    if (c === 47 || c === 63 || c === 35) return false; // / ? #
  }
  return true;
}

/** What `url.split(host)[1]` is: the text between the first and the second occurrence of host. */
function afterHost(url: string, host: string): string {
  const a = url.indexOf(host);
  if (a === -1) return '';
  const from = a + host.length;
  const b = url.indexOf(host, from);
  return b === -1 ? url.slice(from) : url.slice(from, b);
}

/** The forms of a recipient address a link may carry: as is, URL-encoded, base64. */
interface RecipientForms {
  plain: string;
  encoded: string;
  base64: string;
}

function recipientForms(r: string): RecipientForms {
  return {
    plain: r,
    encoded: encodeURIComponent(r).toLowerCase(),
    base64: Buffer.from(r).toString('base64').replace(/=+$/, '').toLowerCase(),
  };
}

/** Adds a finding unless one with the same key was added already. */
function addOnce(once: Set<string>, out: Finding[], key: string, f: Finding): void {
  if (once.has(key)) return;
  once.add(key);
  out.push(f);
}

/** Pure URL checks; never fetches anything. */
export function urlFindings(email: Email, s: UrlsSettings, lex: Lexicons): Finding[] {
  const v = viewOf(email);
  const w = s.weights;
  const out: Finding[] = [];
  const { names, shorteners, risky } = tablesFor(lex, s);
  const pathRe = pathBrandRe(names);
  const fromOrg = v.from.org_domain;
  const once = new Set<string>();
  let recipients: RecipientForms[] | undefined;
  let hidden = 0;
  let riskyCount = 0;
  let sensitive: boolean | undefined;
  const sensitiveFormIn = (html: string): boolean => {
    if (sensitive === undefined) sensitive = sensitiveInputs(html);
    return sensitive;
  };
  for (const u of v.urls as UrlView[]) {
    const scheme = u.scheme;
    if (scheme === 'javascript' || (scheme === 'data' && u.source !== 'src' && !u.is_image)) {
      addOnce(once, out, `script:${scheme}`, {
        type: 'script_url',
        value: `${scheme}: URL in a link`,
        symbol: 'script_url',
        weight: w.script_url,
      });
      continue;
    }
    if (u.source === 'form') {
      if (u.form_has_password) {
        addOnce(once, out, 'form:pw', {
          type: 'credential_form',
          value: `form asking for a password posts to ${u.host || u.url.slice(0, 80)}`,
          symbol: 'credential_form',
          weight: w.credential_form,
        });
      } else if (sensitiveFormIn(v.html)) {
        addOnce(once, out, 'form:sensitive', {
          type: 'credential_form',
          value: `form asking for card, PIN or account numbers posts to ${u.host || u.url.slice(0, 80)}`,
          symbol: 'sensitive_form',
          weight: w.sensitive_form,
        });
      } else if (w.external_form > 0 && u.domain && u.domain !== fromOrg) {
        addOnce(once, out, 'form:ext', {
          type: 'credential_form',
          value: `form posts to ${u.domain}`,
          symbol: 'external_form',
          weight: w.external_form,
        });
      }
    }
    if (scheme !== 'http' && scheme !== 'https') continue;
    if (!u.host) continue;
    if (u.hidden) hidden++;
    if (u.is_ip) {
      addOnce(once, out, `ip:${u.host}`, {
        type: 'ip_url',
        value: `link to the IP address ${u.host}`,
        symbol: 'ip_url',
        weight: w.ip_url,
      });
      continue;
    }
    if (authorityHasAt(u.url)) {
      addOnce(once, out, 'userinfo', {
        type: 'suspicious_url',
        value: `URL hides its host behind user info: ${u.url.slice(0, 100)}`,
        symbol: 'userinfo',
        weight: w.userinfo,
      });
    }
    if (/(^|\.)xn--/.test(u.host)) {
      if (unicodeMixedScript(u.host)) {
        addOnce(once, out, `mixed:${u.host}`, {
          type: 'homograph_domain',
          value: `mixed-script host ${toUnicode(u.host)}`,
          symbol: 'mixed_script',
          weight: w.mixed_script,
        });
      } else {
        addOnce(once, out, `puny:${u.host}`, {
          type: 'homograph_domain',
          value: `punycode host ${u.host}`,
          symbol: 'punycode',
          weight: w.punycode,
        });
      }
    }
    const look = findLookalike(u.domain, names);
    if (look) {
      addOnce(once, out, `look:${u.domain}`, {
        type: look.owner === 'organisation' ? 'internal_domain_lookalike' : 'lookalike_domain',
        value: `${u.domain} looks like ${look.label} (${look.how})`,
        symbol: 'lookalike',
        weight: w.lookalike,
      });
    }
    const sub = brandInSubdomain(u.host, u.domain, names);
    if (sub) {
      addOnce(once, out, `sub:${u.host}`, {
        type: 'brand_impersonation',
        value: `${sub.label} used in the subdomain of ${u.domain}`,
        symbol: 'brand_in_subdomain',
        weight: w.brand_in_subdomain,
      });
    }
    if (
      u.source === 'href' &&
      !once.has('random') &&
      u.domain !== fromOrg &&
      looksRandom(mainLabel(u.domain))
    ) {
      addOnce(once, out, 'random', {
        type: 'suspicious_url',
        value: `link to a machine-generated domain ${u.domain}`,
        symbol: 'random_domain',
        weight: w.random_domain,
      });
    }
    if (shorteners.has(u.domain) || shorteners.has(u.host)) {
      addOnce(once, out, 'short', {
        type: 'url_shortener',
        value: `shortened link via ${u.host}`,
        symbol: 'shortener',
        weight: w.shortener,
      });
    }
    if (
      u.tld &&
      risky.has(u.tld.slice(u.tld.lastIndexOf('.') + 1)) &&
      u.domain !== fromOrg &&
      riskyCount < 2
    ) {
      if (!once.has(`tld:${u.domain}`)) riskyCount++;
      addOnce(once, out, `tld:${u.domain}`, {
        type: 'risky_tld',
        value: `link to ${u.domain} (.${u.tld})`,
        symbol: 'risky_tld',
        weight: w.risky_tld,
      });
    }
    if (u.source !== 'src' && hostInList(lex.freeHosting, u.host, u.domain)) {
      addOnce(once, out, 'hosting', {
        type: 'suspicious_url',
        value: `link to a page on shared hosting ${u.host}`,
        symbol: 'free_hosting',
        weight: w.free_hosting,
      });
    }
    if (u.anchor_domain && u.source === 'href') {
      const shown = u.anchor_domain.replace(/^www\./, '');
      const shownOrg = shown.split('.').length >= 2 ? shown : '';
      if (shownOrg && u.domain && !u.domain.endsWith(shownOrg) && !shownOrg.endsWith(u.domain)) {
        const shownReg = findRegistrable(shownOrg);
        if (shownReg && shownReg !== u.domain) {
          const brand = names.find((n) => n.domains.has(shownReg));
          const strong = brand !== undefined && !brand.domains.has(u.domain);
          addOnce(once, out, strong ? 'mismatch:brand' : 'mismatch', {
            type: 'link_text_mismatch',
            value: `link text shows ${shown} but points to ${u.domain}`,
            ...(strong
              ? { symbol: 'brand_link_text_mismatch', weight: w.brand_link_text_mismatch }
              : { symbol: 'link_text_mismatch', weight: w.link_text_mismatch }),
          });
        }
      }
    }
    if (w.recipient_in_url > 0 && !once.has('rcpt')) {
      recipients ??= v.to
        .map((r) => r.toLowerCase())
        .filter((r) => r.length > 5)
        .map(recipientForms);
      const lower = recipients.length > 0 ? u.url.toLowerCase() : '';
      for (const r of recipients) {
        if (lower.includes(r.plain) || lower.includes(r.encoded) || lower.includes(r.base64)) {
          // in the fragment, the address never reaches a server: only the page's script reads
          // it, to pre-fill a sign-in form (phishing kits); trackers put it in the query
          const hash = lower.indexOf('#');
          const inFragment =
            hash !== -1 &&
            u.source === 'href' &&
            [r.plain, r.encoded, r.base64].some((f) => lower.indexOf(f, hash) !== -1);
          addOnce(once, out, 'rcpt', {
            type: 'suspicious_url',
            value: `link carries the recipient’s address${inFragment ? ' in its fragment, for the page’s script' : ''}`,
            ...(inFragment
              ? { symbol: 'recipient_in_fragment', weight: w.recipient_in_fragment }
              : { symbol: 'recipient_in_url', weight: w.recipient_in_url }),
          });
          break;
        }
      }
    }
    const path = afterHost(u.url, u.host).toLowerCase();
    if (path.length > 1) {
      const label = pathRe.exec(path)?.[1];
      const owner = label ? names.find((n) => n.label === label) : undefined;
      if (owner && !owner.domains.has(u.domain)) {
        addOnce(once, out, 'path', {
          type: 'brand_impersonation',
          value: `${label} named in the path of ${u.domain}`,
          symbol: 'brand_in_path',
          weight: w.brand_in_path,
        });
      }
    }
  }
  if (hidden >= 3)
    out.push({
      type: 'suspicious_url',
      value: `${hidden} hidden links`,
      symbol: 'many_hidden_links',
      weight: w.many_hidden_links,
    });
  return out;
}

const pathRes = new WeakMap<ProtectedName[], RegExp>();
function pathBrandRe(names: ProtectedName[]): RegExp {
  let re = pathRes.get(names);
  if (!re) {
    const labels = [...new Set(names.filter((n) => n.label.length >= 5).map((n) => n.label))];
    re = new RegExp(`[/=._-](${labels.join('|') || 'a^'})[/._-]`);
    pathRes.set(names, re);
  }
  return re;
}

function findRegistrable(host: string): string | undefined {
  return getDomain(host) ?? undefined;
}

/** Input names of a form that asks for what a bank or a card holder keeps secret. */
const SENSITIVE_NAME =
  /\b(?:name|id)\s*=\s*["']?[a-z0-9_-]{0,20}?(?:card_?(?:num|no|number)|ccnum|cc_?number|cvv2?|cvc|pin(?:code)?|ssn|social_?sec|mmn|maiden|routing|acct_?(?:num|no)|account_?(?:num|no|number)|expir|exp_?(?:date|month|year)|passw|passcode)/i;

/**
 * Whether the HTML holds an input whose name asks for card, PIN, social-security or account
 * numbers (the forms of classic bank and card phishing ask for these, often without a password
 * field). A bounded scan of at most 200 input tags of 500 characters each.
 */
export function sensitiveInputs(html: string): boolean {
  const lower = html.slice(0, 500_000).toLowerCase();
  let at = 0;
  for (let n = 0; n < 200; n++) {
    const j = lower.indexOf('<input', at);
    if (j === -1) return false;
    const end = lower.indexOf('>', j);
    const tag = lower.slice(j, end === -1 ? j + 500 : Math.min(end, j + 500));
    if (SENSITIVE_NAME.test(tag)) return true;
    at = j + 6;
  }
  return false;
}

export function analyzeUrls(email: Email, settings: UrlsSettings): AnalyzerAnswerInput {
  const lex = loadLexicons(settings.lexicon_dir);
  const v = viewOf(email);
  const findings = urlFindings(email, settings, lex);
  const domains = new Set(v.urls.map((u) => u.domain).filter(Boolean));
  return answerFrom(findings, {
    base: settings.base_probability,
    threshold: settings.phishing_score_threshold,
    name: 'urls',
    details: { url_count: v.urls.length, domains: [...domains].slice(0, 50) },
    maxLogOdds: 8,
    groups: URLS_SYMBOLS,
  });
}
