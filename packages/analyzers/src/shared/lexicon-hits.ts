/**
 * Lexicon hits of a message's normalised view, memoised per view: the phrases of each language
 * category in the subject and the text, and the brands named in the subject, the sender's display
 * name and the text. Content reads them for its language and brand symbols, headers for display-name
 * brands, rules for the `lexicon` and `brands` fields of `m`.
 */
import type { LanguageCategory, Lexicons } from './lexicons.ts';
import { reportOf } from './machine-mail.ts';
import { PairMemo } from './memo.ts';
import type { TokenIds } from './phrase-index.ts';
import type { MailView } from './view.ts';

export interface LanguageHits {
  language: string;
  subject: Partial<Record<LanguageCategory, string[]>>;
  body: Partial<Record<LanguageCategory, string[]>>;
}

/** Lexicons applied: English plus the message's language; all of them when the language is unknown. */
function lexiconsFor(lex: Lexicons, language: string, allowed: string[]): string[] {
  const langs = [...lex.languages.keys()].filter(
    (l) => allowed.length === 0 || allowed.includes(l),
  );
  if (!language) return langs;
  return langs.filter((l) => l === 'en' || l === language);
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

/** LanguageHits of the words of a subject and a text, normalised and read already. */
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

const wordMemo = new PairMemo<object, Lexicons, ViewWords>();

function viewWords(v: MailView, lex: Lexicons): ViewWords {
  return wordMemo.get(v, lex, () => ({
    subject: lex.readText(v.subject),
    text: lex.readText(v.text),
  }));
}

const hitMemo = new PairMemo<object, string, LanguageHits>();

/** LanguageHits of a view, computed once per view and language selection. */
export function viewHits(v: MailView, lex: Lexicons, allowed: string[]): LanguageHits {
  return hitMemo.get(v, allowed.join(','), () => {
    const w = viewWords(v, lex);
    const hits = wordHits(w.subject, w.text, v.language, lex, allowed);
    return reportOf(v, lex) ? explainReportWording(hits) : hits;
  });
}

/**
 * A message recognised as a report by its structure (a bounce, a read receipt, a TLS or DMARC
 * report) speaks of other mail: the delivery phrases it holds ("could not be delivered",
 * "mailbox full") are its own wording, not a threat or a request, and its alarming tone is the
 * failure it reports. Only those are explained: every other phrase, and every link, form and
 * attachment, counts as in any message (a forged report structure gains nothing else).
 */
function explainReportWording(hits: LanguageHits): LanguageHits {
  const explain = (part: LanguageHits['body']) => {
    const wording = part.delivery ?? [];
    const out: LanguageHits['body'] = {};
    for (const [c, list] of Object.entries(part) as [LanguageCategory, string[]][]) {
      if (c === 'delivery') {
        out[c] = list;
        continue;
      }
      // its alarm is the failure it reports, when it reports one
      if (c === 'negative' && wording.length > 0) continue;
      const kept = list.filter((p) => !wording.some((d) => d === p || d.includes(p)));
      if (kept.length) out[c] = kept;
    }
    return out;
  };
  return { language: hits.language, subject: explain(hits.subject), body: explain(hits.body) };
}

export interface ViewBrands {
  subject: Map<string, number>;
  displayName: Map<string, number>;
  /** In the first 20 000 characters of the text. */
  body: Map<string, number>;
}

const BODY_BRAND_CHARS = 20_000;

const brandMemo = new PairMemo<object, Lexicons, ViewBrands>();

/** Brands named in a view's subject, sender display name and text; computed once per view and lexicons. Read only. */
export function viewBrands(v: MailView, lex: Lexicons): ViewBrands {
  return brandMemo.get(v, lex, () => {
    const w = viewWords(v, lex);
    const head = v.text.length > BODY_BRAND_CHARS ? v.text.slice(0, BODY_BRAND_CHARS) : v.text;
    return {
      subject: lex.brandMatcher.findTokens(v.subject, w.subject),
      displayName: displayNameBrands(v, lex),
      body: lex.brandMatcher.findTokens(head, head === v.text ? w.text : lex.readText(head)),
    };
  });
}

const nameMemo = new PairMemo<object, Lexicons, Map<string, number>>();

/** Brands named in a view's sender display name, computed once per view and lexicons. Read only. */
export function displayNameBrands(v: MailView, lex: Lexicons): Map<string, number> {
  return nameMemo.get(v, lex, () => lex.brandMatcher.find(v.from.display_name));
}
