import type { Brand } from './lexicons.ts';
import { skeleton, withinOneEdit } from './similarity.ts';
import { orgDomain } from './view.ts';

/** The first label of a registrable domain: "paypal.co.uk" → "paypal". */
export function mainLabel(domain: string): string {
  return domain.split('.')[0] ?? domain;
}

/** Labels that are ordinary words or shared infrastructure: never protected as look-alike targets. */
const GENERIC_LABELS = new Set([
  'online',
  'outlook',
  'windows',
  'office',
  'teams',
  'live',
  'mail',
  'email',
  'search',
  'store',
  'apple',
  'chase',
  'orange',
  'visa',
  'norton',
  'ledger',
  'kraken',
  'hermes',
  'steam',
  'zoom',
  'booking',
  'messenger',
  'meta',
  'wise',
  'citi',
]);

export interface ProtectedName {
  /** Brand id, or "organisation" for the organisation's own domains. */
  owner: string;
  /** The owner's primary (first listed) label: the only one checked by edit distance. */
  primary: boolean;
  label: string;
  skeleton: string;
  domains: Set<string>;
}

/** Labels worth protecting: brand domains' main labels of at least 4 characters. */
export function protectedNames(brands: Brand[], organisationDomains: string[]): ProtectedName[] {
  const out: ProtectedName[] = [];
  const seen = new Set<string>();
  const add = (owner: string, domains: string[], guard: boolean, platform: string[] = []) => {
    const own = new Set(domains.map((d) => orgDomain(d)));
    // the platform domains are the owner's too (never a look-alike), but no name to protect
    const set = new Set([...own, ...platform.map((d) => orgDomain(d))]);
    let first = true;
    for (const d of own) {
      const label = mainLabel(d);
      const primary = first;
      first = false;
      if (label.length < 4 || seen.has(`${owner}:${label}`)) continue;
      if (guard && GENERIC_LABELS.has(label)) continue;
      seen.add(`${owner}:${label}`);
      out.push({ owner, label, primary, skeleton: skeleton(label), domains: set });
    }
  };
  for (const b of brands) add(b.id, b.domains, true, b.platform_domains);
  if (organisationDomains.length > 0) add('organisation', organisationDomains, false);
  return out;
}

/** What a look-alike domain adds to a brand name ("paypal" + "secure"). */
const LURE_WORD_LIST = [
  'secure',
  'security',
  'login',
  'log',
  'signin',
  'sign',
  'verify',
  'verification',
  'support',
  'account',
  'accounts',
  'update',
  'service',
  'services',
  'help',
  'online',
  'billing',
  'id',
  'auth',
  'customer',
  'center',
  'centre',
  'alert',
  'notice',
  'pay',
  'payment',
  'team',
  'care',
  'mail',
  'web',
  'app',
  'portal',
  'access',
  'recovery',
  'unlock',
  'confirm',
  'info',
  'official',
  'desk',
  'bank',
  'card',
  'wallet',
  'reward',
  'rewards',
  'gift',
  'promo',
  'delivery',
  'track',
  'tracking',
  'parcel',
  'shipping',
];
const LURE_WORDS_SET = new Set(LURE_WORD_LIST);
const LURE_WORD_MAX = Math.max(...LURE_WORD_LIST.map((w) => w.length));

/**
 * Whether `rest` is made of lure words and digits only ("secure", "login24", "accountupdate"): a
 * word break by dynamic programming, linear in its length (a regex of alternatives under `+`
 * backtracks exponentially on a long run of digits or of overlapping words).
 */
function isLureRest(rest: string): boolean {
  const n = rest.length;
  if (n === 0 || n > 253) return false;
  const ok = new Uint8Array(n + 1);
  ok[0] = 1;
  for (let i = 0; i < n; i++) {
    if (!ok[i]) continue;
    const c = rest.charCodeAt(i);
    if (c >= 48 && c <= 57) ok[i + 1] = 1;
    for (let len = 2; len <= LURE_WORD_MAX && i + len <= n; len++)
      if (LURE_WORDS_SET.has(rest.slice(i, i + len))) ok[i + len] = 1;
  }
  return ok[n] === 1;
}

/** A hyphen-separated part of a label that is a confusable spelling of `n` ("paypa1-security"). */
function confusablePart(label: string, n: ProtectedName): boolean {
  if (!label.includes('-')) return false;
  for (const p of label.split('-', 8))
    if (p.length >= 4 && p !== n.label && skeleton(p) === n.skeleton) return true;
  return false;
}

/**
 * Shortest label (the brand's and the suspect's) judged by edit distance. One edit away from a
 * name of six letters or fewer lies many an unrelated word and established domain (posteo, posten;
 * mobile, t-mobile): short names are judged by confusable spellings only.
 */
const EDIT_MIN = 7;

export interface LookalikeHit {
  owner: string;
  label: string;
  how: 'confusable' | 'edit_distance' | 'contains';
}

/**
 * Is `domain` (registrable) a look-alike of a protected name it does not belong to?
 * confusable skeleton equal, edit distance 1 (labels ≥ 5 chars), or the protected label as a
 * hyphen/word part of a longer label ("paypal-secure", "microsoftonline-verify").
 */
export function findLookalike(domain: string, names: ProtectedName[]): LookalikeHit | undefined {
  if (!domain) return undefined;
  let memo = lookalikeMemo.get(names);
  if (!memo) {
    memo = new Map();
    lookalikeMemo.set(names, memo);
  }
  const known = memo.get(domain);
  if (known !== undefined) return known ?? undefined;
  if (memo.size >= 10_000) memo.clear();
  const hit = computeLookalike(domain, names);
  memo.set(domain, hit ?? null);
  return hit;
}

/** findLookalike answers per name list, by domain (bounded). */
const lookalikeMemo = new WeakMap<ProtectedName[], Map<string, LookalikeHit | null>>();

/** What one protected name says of a label: the first of its tests that holds, in order. */
function testName(
  n: ProtectedName,
  domain: string,
  label: string,
  sk: string,
): LookalikeHit | undefined {
  if (n.domains.has(domain)) return undefined;
  if (label === n.label) return undefined; // same name under another suffix: brand's own or unrelated ccTLD
  if (sk === n.skeleton || confusablePart(label, n))
    return { owner: n.owner, label: n.label, how: 'confusable' };
  if (
    n.primary &&
    n.label.length >= EDIT_MIN &&
    label.length >= EDIT_MIN &&
    withinOneEdit(sk, n.skeleton)
  ) {
    return { owner: n.owner, label: n.label, how: 'edit_distance' };
  }
  if (n.label.length >= 5 && label.length > n.label.length) {
    const parts = label.split('-');
    if (parts.length > 1 && parts.includes(n.label))
      return { owner: n.owner, label: n.label, how: 'contains' };
    const rest = label.startsWith(n.label)
      ? label.slice(n.label.length)
      : label.endsWith(n.label)
        ? label.slice(0, -n.label.length)
        : undefined;
    if (rest !== undefined && isLureRest(rest)) {
      return { owner: n.owner, label: n.label, how: 'contains' };
    }
  }
  return undefined;
}

/** Positions of the names in their list, by what computeLookalike tests. */
interface NameIndex {
  bySkeleton: Map<string, number[]>;
  /** Primary names of 6+ characters (the edit-distance test), by skeleton length. */
  bySkeletonLength: Map<number, number[]>;
  /** Names of 5+ characters (the contains test), by label. */
  byLabel: Map<string, number[]>;
}

const nameIndexes = new WeakMap<ProtectedName[], NameIndex>();

function nameIndex(names: ProtectedName[]): NameIndex {
  let x = nameIndexes.get(names);
  if (!x) {
    x = { bySkeleton: new Map(), bySkeletonLength: new Map(), byLabel: new Map() };
    const push = <K>(m: Map<K, number[]>, k: K, i: number) => {
      const l = m.get(k);
      if (l) l.push(i);
      else m.set(k, [i]);
    };
    names.forEach((n, i) => {
      push(x!.bySkeleton, n.skeleton, i);
      if (n.primary && n.label.length >= EDIT_MIN) push(x!.bySkeletonLength, n.skeleton.length, i);
      if (n.label.length >= 5) push(x!.byLabel, n.label, i);
    });
    nameIndexes.set(names, x);
  }
  return x;
}

/**
 * The first name (in list order) whose tests hold for the label, as a loop over every name would
 * find it: the index narrows the names to those that can pass a test, the first of them that does
 * is the answer (a name before it cannot pass any test).
 */
function computeLookalike(domain: string, names: ProtectedName[]): LookalikeHit | undefined {
  const label = mainLabel(domain);
  if (label.length < 4) return undefined;
  // a domain a brand (or the organisation) owns is its own, never another one's look-alike
  if (ownedByAny(names, domain)) return undefined;
  const sk = skeleton(label);
  const x = nameIndex(names);
  let best = names.length;
  /** The first position in `list` before `best` whose name passes `test`. */
  const first = (list: number[] | undefined, test: (n: ProtectedName) => boolean) => {
    if (!list) return;
    for (const i of list) {
      if (i >= best) return;
      const n = names[i]!;
      if (!n.domains.has(domain) && label !== n.label && test(n)) {
        best = i;
        return;
      }
    }
  };
  first(x.bySkeleton.get(sk), () => true);
  if (label.includes('-'))
    for (const p of label.split('-', 8))
      if (p.length >= 4) first(x.bySkeleton.get(skeleton(p)), (n) => p !== n.label);
  if (label.length >= EDIT_MIN)
    for (let len = sk.length - 1; len <= sk.length + 1; len++)
      first(x.bySkeletonLength.get(len), (n) => withinOneEdit(sk, n.skeleton));
  if (label.length >= 6) {
    const parts = label.split('-');
    if (parts.length > 1) for (const p of parts) first(x.byLabel.get(p), () => true);
    for (let len = 5; len < label.length; len++) {
      const prefix = label.slice(0, len);
      first(x.byLabel.get(prefix), () => isLureRest(label.slice(len)));
      const suffix = label.slice(label.length - len);
      first(
        x.byLabel.get(suffix),
        () => !label.startsWith(suffix) && isLureRest(label.slice(0, label.length - len)),
      );
    }
  }
  for (let i = best; i < names.length; i++) {
    const hit = testName(names[i]!, domain, label, sk);
    if (hit) return hit;
  }
  // the brand cut by a hyphen inside it ("geek-squadservices", "pay-pal-login"): the label read
  // without its hyphens, for the brand and lure words it is made of
  if (label.includes('-')) {
    const joined = label.replace(/-/g, '');
    if (joined.length >= 6)
      for (let len = 5; len < joined.length; len++) {
        const prefix = joined.slice(0, len);
        for (const i of x.byLabel.get(prefix) ?? [])
          if (!names[i]!.domains.has(domain) && isLureRest(joined.slice(len)))
            return { owner: names[i]!.owner, label: names[i]!.label, how: 'contains' };
      }
  }
  return undefined;
}

/** brandInSubdomain's tables of a name list: every protected domain, and the names it may report. */
interface SubdomainIndex {
  domains: Set<string>;
  /** Eligible label → position in the list of the first name with that label. */
  labels: Map<string, number>;
}

const subdomainIndexes = new WeakMap<ProtectedName[], SubdomainIndex>();

function subdomainIndex(names: ProtectedName[]): SubdomainIndex {
  let x = subdomainIndexes.get(names);
  if (!x) {
    x = { domains: new Set(), labels: new Map() };
    for (let i = 0; i < names.length; i++) {
      const n = names[i]!;
      for (const d of n.domains) x.domains.add(d);
      if (n.label.length >= 5 && !GENERIC_LABELS.has(n.label) && !x.labels.has(n.label))
        x.labels.set(n.label, i);
    }
    subdomainIndexes.set(names, x);
  }
  return x;
}

/** Whether `domain` (registrable) is one of the domains of any protected name. */
export function ownedByAny(names: ProtectedName[], domain: string): boolean {
  return subdomainIndex(names).domains.has(domain);
}

const SUBDOMAIN_SEPARATORS = /[.-]/;

/** A protected label used in the subdomain part of an unrelated host ("paypal.com.evil.io"). */
export function brandInSubdomain(
  host: string,
  domain: string,
  names: ProtectedName[],
): ProtectedName | undefined {
  if (!host || !domain || host === domain || !host.endsWith(`.${domain}`)) return undefined;
  const x = subdomainIndex(names);
  if (x.domains.has(domain)) return undefined;
  // the first name in list order whose label is a token of the subdomain part
  let best = -1;
  for (const token of host.slice(0, -domain.length - 1).split(SUBDOMAIN_SEPARATORS)) {
    const i = x.labels.get(token);
    if (i !== undefined && (best === -1 || i < best)) best = i;
  }
  return best === -1 ? undefined : names[best];
}
