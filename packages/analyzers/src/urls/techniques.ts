/**
 * The URL techniques, one function each over one message's UrlContext. Most look at one link at a
 * time, `(ctx, u) => Finding[]`, and apply to links of some kinds only (LinkKind); urlFindings
 * (analyzer.ts) runs them link by link in the order of URL_TECHNIQUES, then the message-level ones.
 */
import { domainToUnicode } from 'node:url';
import type { Email } from '@trawl/contracts';
import { getDomain } from 'tldts';
import { hostInList, type Lexicons } from '../shared/lexicons.ts';
import {
  brandInSubdomain,
  findLookalike,
  mainLabel,
  ownedByAny,
  type ProtectedName,
  protectedNames,
} from '../shared/lookalike.ts';
import { looksRandom } from '../shared/random-domain.ts';
import { type Finding, oneOf } from '../shared/score.ts';
import { htmlMatches, type MailView, type UrlView, viewOf } from '../shared/view.ts';
import type { UrlsSettings } from './settings.ts';

/**
 * What a link is, for the techniques: a `javascript:` or `data:` link (`script`); an http(s) link
 * to an IP address (`ip`) or to a host name (`host`); anything else (`other`: mailto:, a link
 * without a host).
 */
export type LinkKind = 'script' | 'ip' | 'host' | 'other';

export function linkKind(u: UrlView): LinkKind {
  const scheme = u.scheme;
  if (scheme === 'javascript' || (scheme === 'data' && u.source !== 'src' && !u.is_image))
    return 'script';
  if ((scheme !== 'http' && scheme !== 'https') || !u.host) return 'other';
  // a private or loopback address cannot host a page for the recipient: not a lure
  if (u.private_ip) return 'other';
  return u.is_ip ? 'ip' : 'host';
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

/** What every URL technique reads, built once per message, and what they remember across links. */
export interface UrlContext {
  email: Email;
  v: MailView;
  settings: UrlsSettings;
  w: UrlsSettings['weights'];
  lex: Lexicons;
  /** Protected brand and organisation names (look-alike targets). */
  names: ProtectedName[];
  shorteners: Set<string>;
  risky: Set<string>;
  /** Brand labels of five letters or more between separators of a path. */
  pathRe: RegExp;
  fromOrg: string;
  /** Keys of the findings made: most techniques report once per message or per domain. */
  once: Set<string>;
  /** Hidden http(s) links seen. */
  hidden: number;
  /** Distinct risky-TLD domains reported (at most two). */
  riskyCount: number;
  /** The recipients' address forms, made on first use. */
  recipients: RecipientForms[] | undefined;
  /** Whether the HTML asks for card, PIN or account numbers, read on first use. */
  sensitive: boolean | undefined;
}

/** A technique that looks at one link of the kinds it names. */
export interface UrlTechnique {
  kinds: readonly LinkKind[];
  find: (ctx: UrlContext, u: UrlView) => Finding[];
}

/** A technique that looks at the message once all its links were seen. */
export type MessageUrlTechnique = (ctx: UrlContext) => Finding[];

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

export function urlContext(email: Email, settings: UrlsSettings, lex: Lexicons): UrlContext {
  const v = viewOf(email);
  const { names, shorteners, risky } = tablesFor(lex, settings);
  return {
    email,
    v,
    settings,
    w: settings.weights,
    lex,
    names,
    shorteners,
    risky,
    pathRe: pathBrandRe(names),
    fromOrg: v.from.org_domain,
    once: new Set(),
    hidden: 0,
    riskyCount: 0,
    recipients: undefined,
    sensitive: undefined,
  };
}

const NONE: Finding[] = [];

/** The finding, unless one with the same key was made already. */
function once(
  ctx: UrlContext,
  key: string,
  symbol: keyof UrlContext['w'],
  type: string,
  value: string,
): Finding[] {
  if (ctx.once.has(key)) return NONE;
  ctx.once.add(key);
  return oneOf(ctx.w, symbol, type, value);
}

function toUnicode(h: string): string {
  try {
    return domainToUnicode(h) || h;
  } catch {
    return h;
  }
}

function unicodeMixedScript(host: string): boolean {
  const u = toUnicode(host);
  return u
    .split('.')
    .some((l) => /\p{Script=Latin}/u.test(l) && /[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(l));
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

/** Input names of a form that asks for what a bank or a card holder keeps secret. */
const SENSITIVE_NAME =
  /\b(?:name|id)\s*=\s*["']?[a-z0-9_-]{0,20}?(?:card_?(?:num|no|number)|ccnum|cc_?number|cvv2?|cvc|pin(?:code)?|ssn|social_?sec|mmn|maiden|routing|acct_?(?:num|no)|account_?(?:num|no|number)|expir|exp_?(?:date|month|year)|passw|passcode)/i;

/**
 * Whether the HTML holds an input whose name asks for card, PIN, social-security or account
 * numbers (the forms of classic bank and card phishing ask for these, often without a password
 * field). A bounded scan of at most 200 input tags of 500 characters each.
 */
function sensitiveInputs(html: string): boolean {
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

// javascript: and data: links
export const scriptUrlFindings: UrlTechnique = {
  kinds: ['script'],
  find: (ctx, u) =>
    once(ctx, `script:${u.scheme}`, 'script_url', 'script_url', `${u.scheme}: URL in a link`),
};

// forms asking for a password, for card, PIN or account numbers, or posting elsewhere
export const formFindings: UrlTechnique = {
  kinds: ['ip', 'host', 'other'],
  find: (ctx, u) => {
    if (u.source !== 'form') return NONE;
    const { w } = ctx;
    if (u.form_has_password)
      return once(
        ctx,
        'form:pw',
        'credential_form',
        'credential_form',
        `form asking for a password posts to ${u.host || u.url.slice(0, 80)}`,
      );
    ctx.sensitive ??= sensitiveInputs(ctx.v.html);
    if (ctx.sensitive)
      return once(
        ctx,
        'form:sensitive',
        'sensitive_form',
        'credential_form',
        `form asking for card, PIN or account numbers posts to ${u.host || u.url.slice(0, 80)}`,
      );
    if (w.external_form > 0 && u.domain && u.domain !== ctx.fromOrg)
      return once(ctx, 'form:ext', 'external_form', 'credential_form', `form posts to ${u.domain}`);
    return NONE;
  },
};

// links to an IP address
export const ipUrlFindings: UrlTechnique = {
  kinds: ['ip'],
  find: (ctx, u) =>
    once(ctx, `ip:${u.host}`, 'ip_url', 'ip_url', `link to the IP address ${u.host}`),
};

// user info hiding the host ("https://paypal.com@evil.example/")
export const userinfoFindings: UrlTechnique = {
  kinds: ['host', 'ip'],
  find: (ctx, u) => {
    if (!authorityHasAt(u.url)) return NONE;
    return once(
      ctx,
      'userinfo',
      'userinfo',
      'suspicious_url',
      `URL hides its host behind user info: ${u.url.slice(0, 100)}`,
    );
  },
};

// a host written to disguise it: %-escapes, an IPv4 address as one number or in hex / octal
export const encodedHostFindings: UrlTechnique = {
  kinds: ['host', 'ip'],
  find: (ctx, u) => {
    if (!u.host_obfuscated) return NONE;
    return once(
      ctx,
      'encoded_host',
      'encoded_host',
      'suspicious_url',
      `URL disguises its host (${u.host}) as written: %-escapes, control characters or a numeric IP form`,
    );
  },
};

// punycode hosts, and mixed-script ones (Latin with Cyrillic or Greek in one label)
export const homographFindings: UrlTechnique = {
  kinds: ['host'],
  find: (ctx, u) => {
    if (!/(^|\.)xn--/.test(u.host)) return NONE;
    if (unicodeMixedScript(u.host))
      return once(
        ctx,
        `mixed:${u.host}`,
        'mixed_script',
        'homograph_domain',
        `mixed-script host ${toUnicode(u.host)}`,
      );
    return once(ctx, `puny:${u.host}`, 'punycode', 'homograph_domain', `punycode host ${u.host}`);
  },
};

// look-alikes of a protected brand or of the organisation
export const lookalikeFindings: UrlTechnique = {
  kinds: ['host'],
  find: (ctx, u) => {
    if (ctx.lex.freeMail.has(u.domain)) return NONE;
    const look = findLookalike(u.domain, ctx.names);
    if (!look) return NONE;
    return once(
      ctx,
      `look:${u.domain}`,
      'lookalike',
      look.owner === 'organisation' ? 'internal_domain_lookalike' : 'lookalike_domain',
      `${u.domain} looks like ${look.label} (${look.how})`,
    );
  },
};

// a brand in the subdomain of an unrelated domain, where someone is sent (a link, a written URL,
// a form, a link inside an attachment), never what the client loads by itself: an image's or a
// style sheet's host deceives no one about where a click goes, and CDNs name their customers in
// subdomains (a brand's logo from `<brand>-com.<cdn>.net`)
export const brandInSubdomainFindings: UrlTechnique = {
  kinds: ['host'],
  find: (ctx, u) => {
    if (u.is_image || u.source === 'src' || u.source === 'css' || u.source === 'link') return NONE;
    const sub = brandInSubdomain(u.host, u.domain, ctx.names);
    if (!sub) return NONE;
    return once(
      ctx,
      `sub:${u.host}`,
      'brand_in_subdomain',
      'brand_impersonation',
      `${sub.label} used in the subdomain of ${u.domain}`,
    );
  },
};

// a link to a machine-generated domain
export const randomDomainFindings: UrlTechnique = {
  kinds: ['host'],
  find: (ctx, u) => {
    if (
      u.source !== 'href' ||
      ctx.once.has('random') ||
      u.domain === ctx.fromOrg ||
      !looksRandom(mainLabel(u.domain))
    )
      return NONE;
    return once(
      ctx,
      'random',
      'random_domain',
      'suspicious_url',
      `link to a machine-generated domain ${u.domain}`,
    );
  },
};

// URL shorteners
export const shortenerFindings: UrlTechnique = {
  kinds: ['host'],
  find: (ctx, u) => {
    if (!ctx.shorteners.has(u.domain) && !ctx.shorteners.has(u.host)) return NONE;
    return once(ctx, 'short', 'shortener', 'url_shortener', `shortened link via ${u.host}`);
  },
};

// high-abuse TLDs (two domains at most)
export const riskyTldFindings: UrlTechnique = {
  kinds: ['host'],
  find: (ctx, u) => {
    if (
      !u.tld ||
      !ctx.risky.has(u.tld.slice(u.tld.lastIndexOf('.') + 1)) ||
      u.domain === ctx.fromOrg ||
      ctx.riskyCount >= 2
    )
      return NONE;
    if (!ctx.once.has(`tld:${u.domain}`)) ctx.riskyCount++;
    return once(
      ctx,
      `tld:${u.domain}`,
      'risky_tld',
      'risky_tld',
      `link to ${u.domain} (.${u.tld})`,
    );
  },
};

// pages on shared hosting (cloud buckets, site builders, IPFS)
export const freeHostingFindings: UrlTechnique = {
  kinds: ['host'],
  find: (ctx, u) => {
    if (u.source === 'src' || !hostInList(ctx.lex.freeHosting, u.host, u.domain)) return NONE;
    return once(
      ctx,
      'hosting',
      'free_hosting',
      'suspicious_url',
      `link to a page on shared hosting ${u.host}`,
    );
  },
};

// link text that shows one domain (a brand's: strong) and points to another
export const linkTextFindings: UrlTechnique = {
  kinds: ['host'],
  find: (ctx, u) => {
    if (!u.anchor_domain || u.source !== 'href') return NONE;
    const shown = u.anchor_domain.replace(/^www\./, '');
    const shownOrg = shown.split('.').length >= 2 ? shown : '';
    if (!shownOrg || !u.domain || u.domain.endsWith(shownOrg) || shownOrg.endsWith(u.domain))
      return NONE;
    const shownReg = getDomain(shownOrg) ?? undefined;
    if (!shownReg || shownReg === u.domain) return NONE;
    const brand = ctx.names.find((n) => n.domains.has(shownReg));
    const strong = brand !== undefined && !brand.domains.has(u.domain);
    const symbol = strong ? 'brand_link_text_mismatch' : 'link_text_mismatch';
    return once(
      ctx,
      strong ? 'mismatch:brand' : 'mismatch',
      symbol,
      'link_text_mismatch',
      `link text shows ${shown} but points to ${u.domain}`,
    );
  },
};

// the recipient's address carried by a link (in its fragment: for the page's script)
export const recipientInUrlFindings: UrlTechnique = {
  kinds: ['host'],
  find: (ctx, u) => {
    const { w } = ctx;
    if (w.recipient_in_url <= 0 || ctx.once.has('rcpt')) return NONE;
    ctx.recipients ??= ctx.v.to
      .map((r) => r.toLowerCase())
      .filter((r) => r.length > 5)
      .map(recipientForms);
    const lower = ctx.recipients.length > 0 ? u.url.toLowerCase() : '';
    for (const r of ctx.recipients) {
      if (lower.includes(r.plain) || lower.includes(r.encoded) || lower.includes(r.base64)) {
        // in the fragment, the address never reaches a server: only the page's script reads
        // it, to pre-fill a sign-in form (phishing kits); trackers put it in the query
        const hash = lower.indexOf('#');
        const inFragment =
          hash !== -1 &&
          u.source === 'href' &&
          [r.plain, r.encoded, r.base64].some((f) => lower.indexOf(f, hash) !== -1);
        const symbol = inFragment ? 'recipient_in_fragment' : 'recipient_in_url';
        return once(
          ctx,
          'rcpt',
          symbol,
          'suspicious_url',
          `link carries the recipient’s address${inFragment ? ' in its fragment, for the page’s script' : ''}`,
        );
      }
    }
    return NONE;
  },
};

/**
 * The path of a URL as written after its host: up to the query or fragment, which name what a
 * page is about (a share link's text, a tracker's target), not where the page is.
 */
function pathOf(url: string, host: string): string {
  const rest = afterHost(url, host);
  let end = rest.length;
  for (const c of ['?', '#']) {
    const at = rest.indexOf(c);
    if (at !== -1 && at < end) end = at;
  }
  return rest.slice(0, end).toLowerCase();
}

// a brand named in the path of an unrelated domain: a page that is not the brand's poses as the
// brand's (a kit's `/paypal/signin`); only what can be clicked, never an image (a logo is shown
// from anywhere), and not a wrapper that carries another address in its path (URL defence)
export const brandInPathFindings: UrlTechnique = {
  kinds: ['host'],
  find: (ctx, u) => {
    if (u.source !== 'href' && u.source !== 'form' && u.source !== 'area') return NONE;
    if (u.is_image || ctx.lex.freeMail.has(u.domain)) return NONE;
    const path = pathOf(u.url, u.host);
    if (path.length <= 1 || path.includes('http') || path.includes('www.')) return NONE;
    const label = ctx.pathRe.exec(path)?.[1];
    const owner = label ? ctx.names.find((n) => n.label === label) : undefined;
    if (!owner || ownedByAny(ctx.names, u.domain)) return NONE;
    return once(
      ctx,
      'path',
      'brand_in_path',
      'brand_impersonation',
      `${label} named in the path of ${u.domain}`,
    );
  },
};

// many hidden links (counted by urlFindings over the http(s) links)
// status-bar spoofing: script in the HTML that shows another address while the pointer is on a link
export const statusBarFindings: MessageUrlTechnique = ({ v, w }) => {
  if (!htmlMatches(v, /window\.status\s*=|\bstatus\s*=\s*['"]https?:/i)) return NONE;
  return oneOf(
    w,
    'status_bar_spoof',
    'suspicious_url',
    'the HTML rewrites the status bar to show another address (window.status)',
  );
};

export const hiddenLinksFindings: MessageUrlTechnique = ({ hidden, w }) => {
  if (hidden < 3) return NONE;
  return oneOf(w, 'many_hidden_links', 'suspicious_url', `${hidden} hidden links`);
};
