/** Text signals of the content analyzer: sentiment, invisible characters, visible text, junk tokens. */

import { isSpaceCode } from '@trawl/mail';
import type { LanguageHits } from '../shared/lexicon-hits.ts';
import { reportProse } from '../shared/machine-mail.ts';
import { countZeroWidth, MAX_SCAN_CHARS } from '../shared/normalize.ts';

/** Sentiment in −1 (negative, alarming) … 1 (positive, hype) from lexicon word counts. */
export function sentimentScore(h: LanguageHits): number {
  const neg =
    (h.body.negative?.length ?? 0) +
    (h.body.threat?.length ?? 0) +
    2 * ((h.subject.negative?.length ?? 0) + (h.subject.threat?.length ?? 0));
  const pos = (h.body.positive?.length ?? 0) + 2 * (h.subject.positive?.length ?? 0);
  return (pos - neg) / (pos + neg + 2);
}

/**
 * countZeroWidth of `${subject}\n${body}` (bounded like it), counted in the two parts when the
 * bound leaves them whole: no copy of a large body.
 */
export function zeroWidthIn(subject: string, body: string): number {
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

/** The text with every http(s) URL blanked to the next white space; one pass with indexOf. */
function withoutUrls(text: string): string {
  const lower = text.toLowerCase();
  let out = '';
  let from = 0;
  for (let at = lower.indexOf('http', 0); at !== -1; at = lower.indexOf('http', at + 4)) {
    if (at < from) continue;
    const rest = lower.startsWith('://', at + 4) ? 7 : lower.startsWith('s://', at + 4) ? 8 : 0;
    if (rest === 0) continue;
    let end = at + rest;
    while (end < text.length && text.charCodeAt(end) > 32) end++;
    out += `${text.slice(from, at)} `;
    from = end;
    at = end - 4;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * A token of capitals and digits (6 to 16, at least one of each) stuffed inside at least 5 words of
 * the text: a whole run of [A-Z0-9] with a lower-case letter right before and after it.
 */
export function insertedNoise(withUrls: string): string | undefined {
  // a link's query is not words: rewritten links (URL defence, tracking) repeat their tokens
  const text = withoutUrls(withUrls);
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

/** Greeting words of the languages the lexicons cover, at the start of a salutation. */
const GREETING =
  '(?:dear|hello|hi|hey|greetings|good (?:morning|afternoon|day|evening)|hallo|guten tag|liebe[rs]?|sehr geehrte[rs]?|beste|geachte|bonjour|cher|ch[eè]re|hola|estimad[oa]|ol[aá]|prezad[oa]|car[oa]|gentile|sr|sra)';

/**
 * A greeting followed by an e-mail address ("Hello jane@example.org", "Sr: jane@…"). Read in the
 * first 1,500 characters; every quantifier is bounded, so the scan is linear in that slice.
 */
const GREETING_ADDRESS = new RegExp(
  `(?:^|[\\s>,.!])${GREETING}[\\s,:]{1,4}([^\\s,:;!<>@]{1,64}@[^\\s,:;!<>]{1,80})`,
  'i',
);

/**
 * A greeting to a title instead of a name: "Dear Customer", "Dear PayPal Member", "Sehr geehrter
 * Kunde". Singular only (a list's "Dear Members" addresses a group it knows), at most two words
 * (a brand) between the greeting and the title.
 */
const GENERIC_GREETING = new RegExp(
  `(?:^|[\\s>,.!])${GREETING}\\s{1,3}(?:[\\p{L}\\p{N}&.-]{1,24}\\s{1,3}){0,2}(?:customer|client|user|member|account ?holder|subscriber|sir/madam|sir or madam|e-?mail user|webmail user|mailbox user|kunde|kundin|nutzer|klant|gebruiker|utilisateur|cliente|usuario|usuário|utente)(?![\\p{L}\\p{N}])`,
  'iu',
);

export function greetingAddress(text: string): string | undefined {
  return GREETING_ADDRESS.exec(text.slice(0, 1500))?.[1];
}

export function genericGreeting(text: string): string | undefined {
  return GENERIC_GREETING.exec(text.slice(0, 1500))?.[0].trim();
}

/**
 * A telephone number written for a person to dial: an optional country code, then 3-3-4 digits
 * (North America, where call-back fraud is most common), a `+` international number of groups
 * or a national toll-free 0800 number (Latin America and Europe, where the same lures give one),
 * with separators between the groups. Dates, order numbers and bare runs of digits are not read.
 * Every quantifier is bounded, so each start position costs a constant: linear in the slice.
 */
const PHONE_NUMBER =
  /(?<!\d)(?:(?:\+?1[ .-]{0,2})?\(?[2-9]\d{2}\)?[ .-]{1,2}\d{3}[ .-]\d{4}|\+[1-9]\d{0,2}[ .-]{1,2}\(?\d{1,4}\)?(?:[ .-]\d{2,4}){2,4}|0800[ .-]\d{2,4}(?:[ .-]\d{2,4}){1,2})(?!\d)/;

/** A sum of money: a currency sign or code beside a number ("$559.99", "USD408.11", "395,49 €"). */
const MONEY_AMOUNT =
  /(?:[$€£]\s?\d|\b(?:usd|eur|gbp|cad|aud|chf|brl)\s?\d|\d(?:[.,]\d{2})?\s?(?:[€£]|\b(?:usd|eur|gbp|cad|aud|chf|brl)\b))/i;

/** Where call-back lures put their number: the first 5,000 characters. */
const CALLBACK_SCAN_CHARS = 5000;

/** The first telephone number in the start of `text`, or undefined. */
export function phoneNumberIn(text: string): string | undefined {
  return PHONE_NUMBER.exec(text.slice(0, CALLBACK_SCAN_CHARS))?.[0];
}

/** Whether the start of `text` names a sum of money. */
export function namesMoneyAmount(text: string): boolean {
  return MONEY_AMOUNT.test(text.slice(0, CALLBACK_SCAN_CHARS));
}

/** A run of letters: what `split(/[^\p{L}]+/u)` leaves between its separators. */
const LETTERS = /\p{L}+/gu;

/**
 * Up to `max` lower-case words of three letters or more, in order (a bounded scan): the pieces of
 * `split(/[^\p{L}]+/u)` of the lower-cased text (its maximal runs of letters) of three letters or
 * more, read one at a time, so that the scan stops at the `max`-th instead of splitting the whole
 * text (60 words are asked of texts of up to 50,000 characters).
 */
export function wordsOf(text: string, max: number): string[] {
  const out: string[] = [];
  const lower = text.slice(0, 50_000).toLowerCase();
  LETTERS.lastIndex = 0;
  for (let m = LETTERS.exec(lower); m !== null; m = LETTERS.exec(lower)) {
    if (m[0].length >= 3) out.push(m[0]);
    if (out.length >= max) break;
  }
  return out;
}

/**
 * Whether a plain-text part is a text alternative of the HTML: prose (machine fields such as a
 * report's status lines left out) that says what the HTML says, sharing two words in five of the
 * HTML's first sixty. A text part that says something else (a report's fields, random filler) is no
 * alternative, whatever the MIME structure claims (SpamAssassin's MPART_ALT_DIFF).
 */
export function isTextAlternative(plain: string, htmlText: string): boolean {
  const prose = reportProse(plain);
  if (prose === '') return false;
  const html = wordsOf(htmlText, 60);
  if (html.length < 5) return true;
  const seen = new Set(wordsOf(prose, 5_000));
  let shared = 0;
  for (const w of html) if (seen.has(w)) shared++;
  return shared * 5 >= html.length * 2;
}
