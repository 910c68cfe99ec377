import { domainToUnicode } from 'node:url';
import type { AnalyzerAnswerInput, Email } from '@trawl/contracts';
import { getDomain } from 'tldts';
import { type Lexicons, loadLexicons } from '../content/lexicons.ts';
import { answerFrom, type Finding } from '../rules/score.ts';
import { type UrlView, viewOf } from '../rules/view.ts';
import {
  brandInSubdomain,
  findLookalike,
  mainLabel,
  type ProtectedName,
  protectedNames,
} from './lookalike.ts';
import { looksRandom } from './random-domain.ts';
import type { UrlsSettings } from './settings.ts';

function inList(set: Set<string>, host: string, domain: string): boolean {
  if (set.has(domain) || set.has(host)) return true;
  // entries like storage.googleapis.com are hosts below a registrable domain
  const parts = host.split('.');
  for (let i = 1; i < parts.length - 1; i++) if (set.has(parts.slice(i).join('.'))) return true;
  return false;
}

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

/** Pure URL checks; never fetches anything. */
export function urlFindings(email: Email, s: UrlsSettings, lex: Lexicons): Finding[] {
  const v = viewOf(email);
  const w = s.weights;
  const out: Finding[] = [];
  const names = namesFor(lex, s);
  const shorteners = new Set([...lex.shorteners, ...s.url_shorteners.map((x) => x.toLowerCase())]);
  const risky = new Set([
    ...lex.riskyTlds,
    ...s.risky_tlds.map((x) => x.toLowerCase().replace(/^\./, '')),
  ]);
  const fromOrg = v.from.org_domain;
  const once = new Set<string>();
  const add = (key: string, f: Finding) => {
    if (once.has(key)) return;
    once.add(key);
    out.push(f);
  };
  const recipients = v.to.map((r) => r.toLowerCase()).filter((r) => r.length > 5);
  let hidden = 0;
  let riskyCount = 0;
  for (const u of v.urls as UrlView[]) {
    const scheme = u.scheme;
    if (scheme === 'javascript' || (scheme === 'data' && u.source !== 'src' && !u.is_image)) {
      add(`script:${scheme}`, {
        type: 'script_url',
        value: `${scheme}: URL in a link`,
        symbol: 'script_url',
        weight: w.script_url,
      });
      continue;
    }
    if (u.source === 'form') {
      if (u.form_has_password) {
        add('form:pw', {
          type: 'credential_form',
          value: `form asking for a password posts to ${u.host || u.url.slice(0, 80)}`,
          symbol: 'credential_form',
          weight: w.credential_form,
        });
      } else if (w.external_form > 0 && u.domain && u.domain !== fromOrg) {
        add('form:ext', {
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
      add(`ip:${u.host}`, {
        type: 'ip_url',
        value: `link to the IP address ${u.host}`,
        symbol: 'ip_url',
        weight: w.ip_url,
      });
      continue;
    }
    if (/@/.test(u.url.replace(/^[a-z]+:\/\//i, '').split(/[/?#]/)[0] ?? '')) {
      add('userinfo', {
        type: 'suspicious_url',
        value: `URL hides its host behind user info: ${u.url.slice(0, 100)}`,
        symbol: 'userinfo',
        weight: w.userinfo,
      });
    }
    if (/(^|\.)xn--/.test(u.host)) {
      if (unicodeMixedScript(u.host)) {
        add(`mixed:${u.host}`, {
          type: 'homograph_domain',
          value: `mixed-script host ${toUnicode(u.host)}`,
          symbol: 'mixed_script',
          weight: w.mixed_script,
        });
      } else {
        add(`puny:${u.host}`, {
          type: 'homograph_domain',
          value: `punycode host ${u.host}`,
          symbol: 'punycode',
          weight: w.punycode,
        });
      }
    }
    const look = findLookalike(u.domain, names);
    if (look) {
      add(`look:${u.domain}`, {
        type: look.owner === 'organisation' ? 'internal_domain_lookalike' : 'lookalike_domain',
        value: `${u.domain} looks like ${look.label} (${look.how})`,
        symbol: 'lookalike',
        weight: w.lookalike,
      });
    }
    const sub = brandInSubdomain(u.host, u.domain, names);
    if (sub) {
      add(`sub:${u.host}`, {
        type: 'brand_impersonation',
        value: `${sub.label} used in the subdomain of ${u.domain}`,
        symbol: 'brand_in_subdomain',
        weight: w.brand_in_subdomain,
      });
    }
    if (
      u.source === 'href' &&
      u.domain !== fromOrg &&
      looksRandom(mainLabel(u.domain)) &&
      !once.has('random')
    ) {
      add('random', {
        type: 'suspicious_url',
        value: `link to a machine-generated domain ${u.domain}`,
        symbol: 'random_domain',
        weight: w.random_domain,
      });
    }
    if (shorteners.has(u.domain) || shorteners.has(u.host)) {
      add('short', {
        type: 'url_shortener',
        value: `shortened link via ${u.host}`,
        symbol: 'shortener',
        weight: w.shortener,
      });
    }
    if (
      u.tld &&
      risky.has(u.tld.split('.').pop() ?? u.tld) &&
      u.domain !== fromOrg &&
      riskyCount < 2
    ) {
      if (!once.has(`tld:${u.domain}`)) riskyCount++;
      add(`tld:${u.domain}`, {
        type: 'risky_tld',
        value: `link to ${u.domain} (.${u.tld})`,
        symbol: 'risky_tld',
        weight: w.risky_tld,
      });
    }
    if (inList(lex.freeHosting, u.host, u.domain) && u.source !== 'src') {
      add('hosting', {
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
          add(strong ? 'mismatch:brand' : 'mismatch', {
            type: 'link_text_mismatch',
            value: `link text shows ${shown} but points to ${u.domain}`,
            ...(strong
              ? { symbol: 'brand_link_text_mismatch', weight: w.brand_link_text_mismatch }
              : { symbol: 'link_text_mismatch', weight: w.link_text_mismatch }),
          });
        }
      }
    }
    for (const r of w.recipient_in_url > 0 ? recipients : []) {
      const enc = encodeURIComponent(r).toLowerCase();
      const lower = u.url.toLowerCase();
      if (
        lower.includes(r) ||
        lower.includes(enc) ||
        lower.includes(Buffer.from(r).toString('base64').replace(/=+$/, '').toLowerCase())
      ) {
        add('rcpt', {
          type: 'suspicious_url',
          value: 'link carries the recipient’s address',
          symbol: 'recipient_in_url',
          weight: w.recipient_in_url,
        });
        break;
      }
    }
    const path = (u.url.split(u.host)[1] ?? '').toLowerCase();
    if (path.length > 1) {
      const label = pathBrandRe(names).exec(path)?.[1];
      const owner = label ? names.find((n) => n.label === label) : undefined;
      if (owner && !owner.domains.has(u.domain)) {
        add('path', {
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
  });
}
