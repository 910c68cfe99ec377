import type { AnalyzerAnswerInput, Email } from '@trawl/contracts';
import { isSpaceCode } from '@trawl/mail';
import { type MailView, viewOf } from '../rules/view.ts';
import { answerFrom, type Finding } from '../shared/score.ts';
import { type Brand, type LanguageCategory, type Lexicons, loadLexicons } from './lexicons.ts';
import {
  countMixedScriptWords,
  countStyledLetters,
  countZeroWidth,
  hasNonAscii,
  MAX_SCAN_CHARS,
} from './normalize.ts';
import type { TokenIds } from './phrase-index.ts';
import type { ContentSettings } from './settings.ts';
import { CONTENT_SYMBOLS } from './symbols.ts';

type ScoredCategory = 'urgency' | 'threat' | 'reward' | 'credential' | 'payment' | 'spam';
const SCORED: { cat: ScoredCategory; type: string; label: string }[] = [
  { cat: 'urgency', type: 'urgency_language', label: 'urgency' },
  { cat: 'threat', type: 'threat_language', label: 'threat' },
  { cat: 'reward', type: 'reward_language', label: 'reward' },
  { cat: 'credential', type: 'credential_request', label: 'credential request' },
  { cat: 'payment', type: 'payment_request', label: 'payment' },
  { cat: 'spam', type: 'spam_language', label: 'unsolicited-offer' },
];

export interface LanguageHits {
  language: string;
  subject: Partial<Record<LanguageCategory, string[]>>;
  body: Partial<Record<LanguageCategory, string[]>>;
}

/** Lexicons applied: English plus the message's language; all of them when the language is unknown. */
export function lexiconsFor(lex: Lexicons, language: string, allowed: string[]): string[] {
  const langs = [...lex.languages.keys()].filter(
    (l) => allowed.length === 0 || allowed.includes(l),
  );
  if (!language) return langs;
  return langs.filter((l) => l === 'en' || l === language);
}

export function languageHits(
  subject: string,
  text: string,
  language: string,
  lex: Lexicons,
  allowed: string[],
): LanguageHits {
  return wordHits(lex.readText(subject), lex.readText(text), language, lex, allowed);
}

function mergeHits(
  into: Partial<Record<LanguageCategory, string[]>>,
  found: Partial<Record<LanguageCategory, string[]>>,
): void {
  for (const [c, list] of Object.entries(found) as [LanguageCategory, string[]][]) {
    const had = into[c];
    into[c] = had ? [...new Set([...had, ...list])] : list;
  }
}

/** languageHits of the words of a subject and a text, normalised and read already. */
function wordHits(
  st: TokenIds,
  bt: TokenIds,
  language: string,
  lex: Lexicons,
  allowed: string[],
): LanguageHits {
  const out: LanguageHits = { language, subject: {}, body: {} };
  for (const l of lexiconsFor(lex, language, allowed)) {
    const m = lex.languages.get(l)!;
    mergeHits(out.subject, m.find(st));
    mergeHits(out.body, m.find(bt));
  }
  return out;
}

/** The words of a view's normalised subject and text, read once per view and lexicons. */
interface ViewWords {
  subject: TokenIds;
  text: TokenIds;
}

const wordMemo = new WeakMap<object, Map<Lexicons, ViewWords>>();

function viewWords(v: MailView, lex: Lexicons): ViewWords {
  let m = wordMemo.get(v);
  if (!m) {
    m = new Map();
    wordMemo.set(v, m);
  }
  let w = m.get(lex);
  if (!w) {
    w = {
      subject: lex.readText(v.subject),
      text: lex.readText(v.text),
    };
    m.set(lex, w);
  }
  return w;
}

/** Sentiment in −1 (negative, alarming) … 1 (positive, hype) from lexicon word counts. */
export function sentimentScore(h: LanguageHits): number {
  const neg =
    (h.body.negative?.length ?? 0) +
    (h.body.threat?.length ?? 0) +
    2 * ((h.subject.negative?.length ?? 0) + (h.subject.threat?.length ?? 0));
  const pos = (h.body.positive?.length ?? 0) + 2 * (h.subject.positive?.length ?? 0);
  return (pos - neg) / (pos + neg + 2);
}

const hitMemo = new WeakMap<object, Map<string, LanguageHits>>();

/** languageHits of a view, computed once per view and language selection. */
export function viewHits(v: MailView, lex: Lexicons, allowed: string[]): LanguageHits {
  let m = hitMemo.get(v);
  if (!m) {
    m = new Map();
    hitMemo.set(v, m);
  }
  const key = allowed.join(',');
  let h = m.get(key);
  if (!h) {
    const w = viewWords(v, lex);
    h = wordHits(w.subject, w.text, v.language, lex, allowed);
    m.set(key, h);
  }
  return h;
}

export interface ViewBrands {
  subject: Map<string, number>;
  displayName: Map<string, number>;
  /** In the first 20 000 characters of the text. */
  body: Map<string, number>;
}

const BODY_BRAND_CHARS = 20_000;

const brandMemo = new WeakMap<object, Map<Lexicons, ViewBrands>>();

/** Brands named in a view's subject, sender display name and text; computed once per view and lexicons. Read only. */
export function viewBrands(v: MailView, lex: Lexicons): ViewBrands {
  let m = brandMemo.get(v);
  if (!m) {
    m = new Map();
    brandMemo.set(v, m);
  }
  let b = m.get(lex);
  if (!b) {
    const w = viewWords(v, lex);
    const head = v.text.length > BODY_BRAND_CHARS ? v.text.slice(0, BODY_BRAND_CHARS) : v.text;
    b = {
      subject: lex.brandMatcher.findTokens(v.subject, w.subject),
      displayName: displayNameBrands(v, lex),
      body: lex.brandMatcher.findTokens(head, head === v.text ? w.text : lex.readText(head)),
    };
    m.set(lex, b);
  }
  return b;
}

const nameMemo = new WeakMap<object, Map<Lexicons, Map<string, number>>>();

/** Brands named in a view's sender display name, computed once per view and lexicons. Read only. */
export function displayNameBrands(v: MailView, lex: Lexicons): Map<string, number> {
  let m = nameMemo.get(v);
  if (!m) {
    m = new Map();
    nameMemo.set(v, m);
  }
  let b = m.get(lex);
  if (!b) {
    b = lex.brandMatcher.find(v.from.display_name);
    m.set(lex, b);
  }
  return b;
}

/** Whether a domain is one of a brand's domains or below one. */
function brandOwns(brand: Brand, d: string): boolean {
  return brand.domains.some((bd) => d === bd || d.endsWith(`.${bd}`));
}

export function contentFindings(
  email: Email,
  s: ContentSettings,
  lex: Lexicons,
): { findings: Finding[]; details: Record<string, unknown> } {
  const v = viewOf(email);
  const w = s.weights;
  const out: Finding[] = [];
  const hits = viewHits(v, lex, s.languages);
  let categories = 0;
  for (const { cat, type, label } of SCORED) {
    const sub = hits.subject[cat] ?? [];
    const body = (hits.body[cat] ?? []).filter((p) => !sub.includes(p));
    const n = Math.min(sub.length * w.subject_factor + body.length, w[cat].max_hits);
    if (n <= 0) continue;
    categories++;
    const phrases = [...sub, ...body]
      .slice(0, 4)
      .map((p) => `“${p}”`)
      .join(', ');
    out.push({
      type,
      value: `${label} language: ${phrases}`,
      symbol: `${cat}_${Math.min(n, 3)}`,
      weight: n * w[cat].per_hit,
    });
    if (sub.length)
      out.push({
        type,
        value: `${label} language in the subject`,
        symbol: `subject_${cat}`,
        weight: 0,
      });
  }
  if (categories >= 3)
    out.push({
      type: 'urgency_language',
      value: `${categories} kinds of pressure language together`,
      symbol: 'combo_bonus',
      weight: w.combo_bonus,
    });

  const sentiment = sentimentScore(hits);
  if (sentiment <= -s.sentiment_threshold) {
    out.push({
      type: 'negative_sentiment',
      value: `alarming tone (sentiment ${sentiment.toFixed(2)})`,
      symbol: 'negative_sentiment',
      weight: w.negative_sentiment,
    });
  }

  // brands named in the text versus the sender's domain
  const { subject: subjBrands, displayName: dnBrands, body: bodyBrands } = viewBrands(v, lex);
  const fromDomain = v.from.domain;
  const pressureCount = (['credential', 'payment', 'threat'] as const).reduce(
    (n, c) => n + (hits.subject[c]?.length ?? 0) + (hits.body[c]?.length ?? 0),
    0,
  );
  const pressure = pressureCount >= 2;
  const linkDomains = new Set(
    v.urls
      .filter((u) => u.source === 'href' || u.source === 'form')
      .map((u) => u.domain)
      .filter(Boolean),
  );
  let brandDone = false;
  for (const id of new Set([...subjBrands.keys(), ...dnBrands.keys(), ...bodyBrands.keys()])) {
    if (brandDone) break;
    if (s.protected_brands.length && !s.protected_brands.includes(id)) continue;
    const brand = lex.brands.find((b) => b.id === id);
    if (!brand) continue;
    const inName = dnBrands.has(id);
    const conf = subjBrands.has(id) || inName ? 0.9 : (bodyBrands.get(id) ?? 0) >= 2 ? 0.7 : 0.5;
    if (conf < s.ner_confidence_threshold) continue;
    if (brandOwns(brand, fromDomain)) {
      // the brand's own domain in From, asking for credentials or money, and not one link to the
      // brand: a spoofed sender (genuine brand mail links to the brand; a verified DMARC pass for
      // the domain, which headers credits, is what makes such a From believable)
      const request = (['credential', 'payment'] as const).some(
        (c) => (hits.subject[c]?.length ?? 0) + (hits.body[c]?.length ?? 0) > 0,
      );
      if (
        request &&
        linkDomains.size > 0 &&
        ![...linkDomains].some((d) => brandOwns(brand, d)) &&
        !(v.auth.dmarc === 'pass' && v.auth.verified)
      ) {
        out.push({
          type: 'brand_impersonation',
          value: `From is ${fromDomain} (${id}) but no link goes to ${id}: ${[...linkDomains].slice(0, 3).join(', ')}`,
          symbol: 'brand_sender_offsite_links',
          weight: w.brand_sender_offsite_links,
        });
        brandDone = true;
      }
      continue;
    }
    const linksToBrand = [...linkDomains].some((d) => brandOwns(brand, d));
    if (pressure && !linksToBrand) {
      out.push({
        type: 'brand_impersonation',
        value: `mentions ${id} with a request, sent from ${fromDomain || 'an unknown domain'}`,
        symbol: 'brand_impersonation',
        weight: w.brand_impersonation * conf,
      });
      brandDone = true;
    } else if (subjBrands.has(id) && !linksToBrand) {
      out.push({
        type: 'brand_impersonation',
        value: `${id} named in the subject, sent from ${fromDomain || 'an unknown domain'}`,
        symbol: 'brand_mention',
        weight: w.brand_mention,
      });
      brandDone = true;
    }
  }

  // text obfuscation against keyword filters
  // styled letters and mixed-script words need characters outside ASCII; most texts have none
  const raw = `${v.subject}\n${v.text}`;
  const plain = !hasNonAscii(v.subject) && !hasNonAscii(v.text);
  const zw = zeroWidthIn(v.subject, v.html || v.text);
  const styled = plain ? 0 : countStyledLetters(raw);
  const mixed = plain ? 0 : countMixedScriptWords(raw);
  if (zw >= 5 || styled >= 4 || mixed >= 2) {
    out.push({
      type: 'text_obfuscation',
      value: `obfuscated text (${zw} invisible characters, ${styled} styled letters, ${mixed} mixed-script words)`,
      symbol: 'text_obfuscation',
      weight: w.text_obfuscation,
    });
  }
  // one random token stuffed into the words again and again ("dow9R4ZET0AYQnlo9R4ZET0AYQad")
  const noise = insertedNoise(v.text.slice(0, 20_000));
  if (noise) {
    out.push({
      type: 'text_obfuscation',
      value: `the same junk token ${noise.slice(0, 20)} is stuffed into the words`,
      symbol: 'inserted_noise',
      weight: w.inserted_noise,
    });
  }
  // text pushed far off screen by CSS (hidden filler or hidden lure)
  if (
    v.has_html &&
    /(?:margin-(?:top|left)|text-indent|left|top)\s*:\s*-?\d{5,}px/i.test(v.html.slice(0, 200_000))
  ) {
    out.push({
      type: 'suspicious_content',
      value: 'HTML hides content by moving it tens of thousands of pixels off screen',
      symbol: 'hidden_text',
      weight: w.hidden_text,
    });
  }
  // money or a discount in the subject ("$300 off", "1.3426 BTC", "20% für dich")
  if (/[$€£]\s?\d|\d\s?(?:[$€£]|usd\b|eur\b|btc\b|eth\b|usdt\b)|\d\s?%/i.test(v.subject)) {
    out.push({
      type: 'reward_language',
      value: 'money or a discount named in the subject',
      symbol: 'subject_money',
      weight: w.subject_money,
    });
  }
  // image-only lure: an HTML body whose visible text is almost nothing but which links out
  if (
    v.has_html &&
    (email.attachments?.length ?? 0) === 0 &&
    v.urls.some((u) => u.is_image || u.source === 'src') &&
    v.urls.some((u) => u.source === 'href' && (u.scheme === 'http' || u.scheme === 'https')) &&
    visibleBelow(v.html_text, email.body_text, 120)
  ) {
    out.push({
      type: 'suspicious_content',
      value: 'message is an image with a link and almost no text',
      symbol: 'image_only',
      weight: w.image_only,
    });
  }
  return {
    findings: out,
    details: {
      language: v.language || 'unknown',
      sentiment: Math.round(sentiment * 100) / 100,
      hits: { subject: hits.subject, body: hits.body },
    },
  };
}

/**
 * countZeroWidth of `${subject}\n${body}` (bounded like it), counted in the two parts when the
 * bound leaves them whole: no copy of a large body.
 */
function zeroWidthIn(subject: string, body: string): number {
  if (subject.length + 1 + body.length > MAX_SCAN_CHARS)
    return countZeroWidth(`${subject}\n${body}`);
  return countZeroWidth(subject) + countZeroWidth(body);
}

/**
 * Whether the visible text is shorter than `limit`: the HTML's text with white space collapsed
 * and trimmed (`replace(/\s+/g, ' ').trim()`) plus the trimmed plain text, counted without
 * building either and only as far as needed.
 */
export function visibleBelow(
  htmlText: string,
  bodyText: string | undefined,
  limit: number,
): boolean {
  let n = bodyText?.trim().length ?? 0;
  if (n >= limit) return false;
  let seen = false; // a visible character so far
  let gap = false; // white space since the last visible character
  for (let i = 0; i < htmlText.length; i++) {
    if (isSpaceCode(htmlText.charCodeAt(i))) {
      gap = seen;
      continue;
    }
    n += gap ? 2 : 1;
    if (n >= limit) return false;
    seen = true;
    gap = false;
  }
  return true;
}

const isLowerAscii = (c: number) => c >= 97 && c <= 122;
const isCapitalOrDigit = (c: number) => (c >= 65 && c <= 90) || (c >= 48 && c <= 57);

/**
 * A token of capitals and digits (6 to 16, at least one of each) stuffed inside at least 5 words of
 * the text: a whole run of [A-Z0-9] with a lower-case letter right before and after it.
 */
export function insertedNoise(text: string): string | undefined {
  const counts = new Map<string, number>();
  const n = text.length;
  for (let i = 0; i < n; ) {
    if (!isCapitalOrDigit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let j = i;
    let digit = false;
    let capital = false;
    for (; j < n; j++) {
      const c = text.charCodeAt(j);
      if (c >= 48 && c <= 57) digit = true;
      else if (c >= 65 && c <= 90) capital = true;
      else break;
    }
    const len = j - i;
    if (
      digit &&
      capital &&
      len >= 6 &&
      len <= 16 &&
      i > 0 &&
      isLowerAscii(text.charCodeAt(i - 1)) &&
      j < n &&
      isLowerAscii(text.charCodeAt(j))
    ) {
      const t = text.slice(i, j);
      const k = (counts.get(t) ?? 0) + 1;
      if (k >= 5) return t;
      counts.set(t, k);
    }
    i = j;
  }
  return undefined;
}

export function analyzeContent(email: Email, settings: ContentSettings): AnalyzerAnswerInput {
  const lex = loadLexicons(settings.lexicon_dir);
  const { findings, details } = contentFindings(email, settings, lex);
  return answerFrom(findings, {
    base: settings.base_probability,
    threshold: settings.phishing_score_threshold,
    name: 'content',
    details,
    maxLogOdds: 7,
    groups: CONTENT_SYMBOLS,
  });
}
