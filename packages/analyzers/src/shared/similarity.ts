/**
 * String similarity for look-alike domains, shared by the urls and headers analyzers (brand and
 * organisation look-alikes) and the context analyzer (internal-domain look-alikes).
 */

/**
 * Edit distance with an early exit: answers `max + 1` as soon as it must exceed `max`. Levenshtein
 * (insert, delete, substitute); with `transpositions`, swapping two adjacent characters counts as
 * one edit too (optimal string alignment).
 */
export function editDistance(a: string, b: string, max = 2, transpositions = false): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const n = b.length;
  let prev2 = new Array<number>(n + 1);
  let prev = new Array<number>(n + 1);
  let cur = new Array<number>(n + 1);
  for (let j = 0; j <= n; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const ai = a.charCodeAt(i - 1);
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const bj = b.charCodeAt(j - 1);
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ai === bj ? 0 : 1));
      if (
        transpositions &&
        i > 1 &&
        j > 1 &&
        ai === b.charCodeAt(j - 2) &&
        a.charCodeAt(i - 2) === bj
      ) {
        v = Math.min(v, prev2[j - 2]! + 1);
      }
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    const spare = prev2;
    prev2 = prev;
    prev = cur;
    cur = spare;
  }
  return prev[n]!;
}

/** Whether two strings are at most one edit apart: `editDistance(a, b, 1) <= 1`, in one pass. */
export function withinOneEdit(a: string, b: string): boolean {
  if (a.length === b.length) {
    let differ = 0;
    for (let i = 0; i < a.length; i++)
      if (a.charCodeAt(i) !== b.charCodeAt(i) && ++differ > 1) return false;
    return true;
  }
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  if (long.length - short.length > 1) return false;
  // the longer one is the shorter one with one character inserted
  let i = 0;
  while (i < short.length && short.charCodeAt(i) === long.charCodeAt(i)) i++;
  for (; i < short.length; i++) if (short.charCodeAt(i) !== long.charCodeAt(i + 1)) return false;
  return true;
}

/** How a skeleton folds a label: single characters, then digraphs, in order. */
export interface Fold {
  chars: Readonly<Record<string, string>>;
  digraphs: readonly (readonly [string, string])[];
}

/** Characters and digraphs that look alike in a domain label (Unicode TR39 in spirit). */
const LOOKALIKE_FOLD: Fold = {
  chars: {
    '0': 'o',
    '1': 'l',
    '3': 'e',
    '4': 'a',
    '5': 's',
    '7': 't',
    '8': 'b',
    '9': 'g',
    '|': 'l',
    i: 'l',
    '\u0430': 'a',
    '\u0435': 'e',
    '\u043e': 'o',
    '\u0440': 'p',
    '\u0441': 'c',
    '\u0443': 'y',
    '\u0445': 'x',
    '\u0456': 'l',
    '\u0458': 'j',
    '\u04bb': 'h',
    '\u0501': 'd',
    '\u051b': 'q',
    '\u051d': 'w',
    '\u03bf': 'o',
    '\u03b1': 'a',
    '\u03c1': 'p',
    '\u03bd': 'v',
    '\u03b9': 'l',
    '\u0131': 'l',
    '\u0261': 'g',
  },
  digraphs: [
    ['rn', 'm'],
    ['vv', 'w'],
    ['cl', 'd'],
  ],
};

/**
 * The context analyzer's narrower fold for internal domains: a subset of LOOKALIKE_FOLD's
 * characters (no 9, fewer Cyrillic and Greek letters) and no cl → d.
 */
export const INTERNAL_FOLD: Fold = {
  chars: Object.fromEntries(
    [
      '0',
      '1',
      '3',
      '4',
      '5',
      '7',
      '8',
      'i',
      '|',
      '\u0430',
      '\u0435',
      '\u043e',
      '\u0440',
      '\u0441',
      '\u0445',
      '\u0443',
      '\u0456',
      '\u03bf',
      '\u0131',
    ].map((c) => [c, LOOKALIKE_FOLD.chars[c]!]),
  ),
  digraphs: [
    ['rn', 'm'],
    ['vv', 'w'],
  ],
};

const MARKS = /\p{M}+/gu;

/**
 * Skeleton of a label: lower case, accents removed, look-alike characters and digraphs folded
 * (`fold`), hyphens dropped. `paypa1` and `paypal` share a skeleton.
 */
export function skeleton(label: string, fold: Fold = LOOKALIKE_FOLD): string {
  const s = label.toLowerCase().normalize('NFKD').replace(MARKS, '');
  let out = '';
  for (const c of s) out += fold.chars[c] ?? c;
  for (const [from, to] of fold.digraphs) out = out.replaceAll(from, to);
  return out.replaceAll('-', '');
}
