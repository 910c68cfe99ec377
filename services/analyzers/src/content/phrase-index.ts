/**
 * Fast phrase matching on word tokens: a phrase list is indexed by its first token, so a text is
 * scanned once in O(tokens), whatever the number of phrases. A trailing `*` on a phrase's last word
 * matches any word that starts with it ("verif*").
 */

/** Max tokens scanned per text (keeps matching bounded on huge bodies). */
export const MAX_TOKENS = 12_000;

/** Code point classes: 0 not yet known, then OTHER, LETTER (\p{L}) or NUMBER (\p{N}). */
const OTHER = 1;
const LETTER = 2;
const NUMBER = 3;
const IS_LETTER = /^\p{L}$/u;
const IS_NUMBER = /^\p{N}$/u;

function classify(ch: string): number {
  return IS_LETTER.test(ch) ? LETTER : IS_NUMBER.test(ch) ? NUMBER : OTHER;
}

/** Classes of the BMP, learnt on first sight; a surrogate is OTHER alone, a pair is looked up whole. */
const BMP = new Uint8Array(0x10000);
for (let c = 0; c < 0x80; c++) BMP[c] = classify(String.fromCharCode(c));
BMP.fill(OTHER, 0xd800, 0xe000);
const ASTRAL = new Map<number, number>();

/** Class of the code point that starts at `i` of `s`, whose first code unit is `c`. */
function classAt(s: string, i: number, c: number): number {
  const k = BMP[c]!;
  if (k === 0) {
    const learnt = classify(String.fromCharCode(c));
    BMP[c] = learnt;
    return learnt;
  }
  if (c < 0xd800 || c > 0xdbff || i + 1 >= s.length) return k;
  const d = s.charCodeAt(i + 1);
  if (d < 0xdc00 || d > 0xdfff) return k;
  const cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
  let a = ASTRAL.get(cp);
  if (a === undefined) {
    a = classify(String.fromCodePoint(cp));
    ASTRAL.set(cp, a);
  }
  return a;
}

/**
 * The word tokens of `text`, at most MAX_TOKENS: exactly the matches of
 * `/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu`, found in one pass over the code units without match objects.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    let k = c < 0x80 ? BMP[c]! : classAt(text, i, c);
    if (k === OTHER) {
      i++;
      continue;
    }
    const start = i;
    // a letter or number whose first code unit is a high surrogate is a surrogate pair
    i += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
    while (i < n) {
      c = text.charCodeAt(i);
      k = c < 0x80 ? BMP[c]! : classAt(text, i, c);
      if (k === OTHER) break;
      i += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
    }
    // an apostrophe followed by letters belongs to the word ("don't")
    if (i + 1 < n && text.charCodeAt(i) === 39) {
      let j = i + 1;
      while (j < n) {
        c = text.charCodeAt(j);
        k = c < 0x80 ? BMP[c]! : classAt(text, j, c);
        if (k !== LETTER) break;
        j += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
      }
      if (j > i + 1) i = j;
    }
    out.push(text.slice(start, i));
    if (out.length >= MAX_TOKENS) break;
  }
  return out;
}

interface Entry {
  key: string;
  /** Tokens after the first. */
  rest: string[];
  /** The last token is a prefix (phrase ended with *). */
  stem: boolean;
  label: string;
}

/** What a scan found: per key, its label and how many times it was found. */
export type ScanHits = Map<string, { label: string; count: number }>;

export class PhraseIndex {
  private readonly byFirst = new Map<string, Entry[]>();
  /**
   * Single-token stems of at least 3 characters, in the order added (a shorter one can never
   * match: stems are looked up by a token's first 3 characters).
   */
  private readonly stems: Entry[] = [];
  /** The same stems by their first 3 characters, used when there are many. */
  private readonly stemsByPrefix = new Map<string, Entry[]>();
  size = 0;

  /** `tokens` are the phrase's tokens (same tokenizer as the text); `key` is what a hit reports. */
  add(tokens: string[], key: string, label: string, stem = false): void {
    if (tokens.length === 0) return;
    this.size++;
    const [first, ...rest] = tokens as [string, ...string[]];
    if (stem && rest.length === 0) {
      if (first.length < 3) return;
      const e = { key, rest: [first], stem: true, label };
      this.stems.push(e);
      const k = first.slice(0, 3);
      const list = this.stemsByPrefix.get(k);
      if (list) list.push(e);
      else this.stemsByPrefix.set(k, [e]);
      return;
    }
    const list = this.byFirst.get(first);
    const e = { key, rest, stem, label };
    if (list) list.push(e);
    else this.byFirst.set(first, [e]);
  }

  /** Hits as (key, label) pairs, with the number of times each key was found; bounded. */
  scan(tokens: readonly string[], maxHits = 500): ScanHits {
    const out: ScanHits = new Map();
    let hits = 0;
    const byFirst = this.byFirst;
    const stems = this.stems.length === 0 ? undefined : this.stems;
    const fewStems = this.stems.length <= 8;
    for (let i = 0; i < tokens.length && hits < maxHits; i++) {
      const t = tokens[i]!;
      const list = byFirst.get(t);
      if (list !== undefined) {
        for (const e of list) {
          const rest = e.rest;
          let ok = true;
          for (let j = 0; j < rest.length; j++) {
            const tok = tokens[i + 1 + j];
            const want = rest[j]!;
            if (
              tok === undefined ||
              !(tok === want || (e.stem && j === rest.length - 1 && tok.startsWith(want)))
            ) {
              ok = false;
              break;
            }
          }
          if (ok) {
            const prev = out.get(e.key);
            if (prev) prev.count++;
            else out.set(e.key, { label: e.label, count: 1 });
            hits++;
          }
        }
      }
      if (stems !== undefined && t.length >= 3) {
        const sl = fewStems ? stems : this.stemsByPrefix.get(t.slice(0, 3));
        if (sl !== undefined) {
          for (const e of sl) {
            if (!t.startsWith(e.rest[0]!)) continue;
            const prev = out.get(e.key);
            if (prev) prev.count++;
            else out.set(e.key, { label: e.label, count: 1 });
            hits++;
          }
        }
      }
    }
    return out;
  }
}
