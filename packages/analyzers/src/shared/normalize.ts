/** Text normalisation shared by the lexicon matchers. */

import { CYRILLIC_GREEK, LATIN, LETTER, OTHER, SCRIPTS, WORD_CLASSES } from './code-points.ts';

/** Invisible code points (soft hyphen, zero-width, bidi controls, variation selectors, fillers). */
const ZERO_WIDTH =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: a list of single invisible code points
  /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]/g;
/** Combining marks and the invisible code points of ZERO_WIDTH, removed in one pass. */
const STRIP =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: a list of single invisible code points
  /[\p{M}\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]+/gu;
const QUOTES = /[\u2018\u2019\u02bc`´]/g;
/** The whitespace that collapsing `\s+` to one space changes: runs of two, or one that is not a space. */
const SPACES = /\s{2,}|[^\S ]/g;
const NON_ASCII = /[^\x00-\x7f]/;

/** Max characters of text any analyzer scans: keeps every analyzer bounded on huge input. */
export const MAX_SCAN_CHARS = 60_000;

/** Whether `text` has a character outside ASCII. */
export function hasNonAscii(text: string): boolean {
  return NON_ASCII.test(text);
}

/**
 * Lower-cased, accent-free, compatibility-folded text (NFKD: "𝘿𝙄𝙔" → "diy", "ﬁ" → "fi"), with
 * invisible characters removed and whitespace collapsed. Bounded to MAX_SCAN_CHARS.
 */
export function normalizeForMatch(text: string): string {
  const bounded = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  // ASCII is its own NFKD form and has no marks, invisible characters or typographic quotes
  if (!NON_ASCII.test(bounded))
    return bounded.toLowerCase().replace(/`/g, "'").replace(SPACES, ' ');
  return bounded
    .normalize('NFKD')
    .replace(STRIP, '')
    .toLowerCase()
    .replace(QUOTES, "'")
    .replace(SPACES, ' ');
}

/** Counts invisible/format characters used to break up words (filter evasion). */
export function countZeroWidth(text: string): number {
  const bounded = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  let n = 0;
  for (const _ of bounded.matchAll(ZERO_WIDTH)) n++;
  return n;
}

const MATH_ALNUM = /[\u{1d400}-\u{1d7ff}]/gu;
const ENCLOSED = /[\u{1f130}-\u{1f189}\u24b6-\u24e9]/gu;

/** Letters drawn from "styled" Unicode blocks (mathematical bold/italic, enclosed letters). */
export function countStyledLetters(text: string): number {
  const bounded = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  let n = 0;
  for (const _ of bounded.matchAll(MATH_ALNUM)) n++;
  for (const _ of bounded.matchAll(ENCLOSED)) n++;
  return n;
}

const CYRILLIC_OR_GREEK = /[\p{Script=Cyrillic}\p{Script=Greek}]/u;

/**
 * Words that mix Latin letters with Cyrillic or Greek look-alikes ("Pаypal" with a Cyrillic а):
 * a classic way to defeat keyword filters. A word is a run of three or more letters (\p{L}).
 */
export function countMixedScriptWords(text: string): number {
  const bounded = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  // a mixed word needs a Cyrillic or Greek letter: most texts have none
  if (!CYRILLIC_OR_GREEK.test(bounded)) return 0;
  let n = 0;
  let letters = 0;
  let latin = false;
  let cyrillicGreek = false;
  for (let i = 0; i < bounded.length; ) {
    const c = bounded.charCodeAt(i);
    const k = WORD_CLASSES.at(bounded, i, c);
    if (k === LETTER) {
      letters++;
      const script = SCRIPTS.at(bounded, i, c);
      if (script === LATIN) latin = true;
      else if (script === CYRILLIC_GREEK) cyrillicGreek = true;
    } else {
      if (letters >= 3 && latin && cyrillicGreek) n++;
      letters = 0;
      latin = false;
      cyrillicGreek = false;
    }
    // a letter or number whose first code unit is a high surrogate is a surrogate pair
    i += k !== OTHER && c >= 0xd800 && c <= 0xdbff ? 2 : 1;
  }
  if (letters >= 3 && latin && cyrillicGreek) n++;
  return n;
}
