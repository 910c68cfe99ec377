/**
 * Fast phrase matching on word tokens: a phrase list is indexed by its first token, so a text is
 * scanned once in O(tokens), whatever the number of phrases. A trailing `*` on a phrase's last word
 * matches any word that starts with it ("verif*").
 */

import { LETTER, OTHER, WORD_CLASSES } from './code-points.ts';

const BMP = WORD_CLASSES.bmp;

/** Max tokens scanned per text (keeps matching bounded on huge bodies). */
export const MAX_TOKENS = 12_000;

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
    let k = c < 0x80 ? BMP[c]! : WORD_CLASSES.at(text, i, c);
    if (k === OTHER) {
      i++;
      continue;
    }
    const start = i;
    // a letter or number whose first code unit is a high surrogate is a surrogate pair
    i += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
    while (i < n) {
      c = text.charCodeAt(i);
      k = c < 0x80 ? BMP[c]! : WORD_CLASSES.at(text, i, c);
      if (k === OTHER) break;
      i += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
    }
    // an apostrophe followed by letters belongs to the word ("don't")
    if (i + 1 < n && text.charCodeAt(i) === 39) {
      let j = i + 1;
      while (j < n) {
        c = text.charCodeAt(j);
        k = c < 0x80 ? BMP[c]! : WORD_CLASSES.at(text, j, c);
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
  /** The phrase list the entry belongs to. */
  list: number;
}

/** What a scan found: per key, its label and how many times it was found. */
export type ScanHits = Map<string, { label: string; count: number }>;

/**
 * One or more phrase lists in one index: a text is scanned once for all of them (one lookup per
 * token), each list with its own hits and its own bound on hits, exactly as if it were scanned
 * alone.
 */
export class PhraseIndex {
  private readonly byFirst = new Map<string, Entry[]>();
  /**
   * Single-token stems of at least 3 characters, in the order added (a shorter one can never
   * match: stems are looked up by a token's first 3 characters).
   */
  private readonly stems: Entry[] = [];
  /** The same stems by their first 3 characters, used when there are many. */
  private readonly stemsByPrefix = new Map<string, Entry[]>();
  /** Phrases added per list. */
  private readonly sizes: number[];
  /** scanLists answers by token array (token arrays are never changed once made). */
  private scans = new WeakMap<readonly string[], ScanHits[]>();

  /** `maxHits`: per list, the number of hits after which a scan stops looking for more. */
  constructor(private readonly maxHits: readonly number[] = [500]) {
    this.sizes = maxHits.map(() => 0);
  }

  /** Phrases added to list 0. */
  get size(): number {
    return this.sizes[0]!;
  }

  /**
   * `tokens` are the phrase's tokens (same tokenizer as the text); `key` is what a hit reports;
   * `list` the phrase list it belongs to.
   */
  add(tokens: string[], key: string, label: string, stem = false, list = 0): void {
    if (tokens.length === 0) return;
    this.sizes[list]!++;
    this.scans = new WeakMap();
    const [first, ...rest] = tokens as [string, ...string[]];
    if (stem && rest.length === 0) {
      if (first.length < 3) return;
      const e = { key, rest: [first], stem: true, label, list };
      this.stems.push(e);
      const k = first.slice(0, 3);
      const sl = this.stemsByPrefix.get(k);
      if (sl) sl.push(e);
      else this.stemsByPrefix.set(k, [e]);
      return;
    }
    const e = { key, rest, stem, label, list };
    const fl = this.byFirst.get(first);
    if (fl) fl.push(e);
    else this.byFirst.set(first, [e]);
  }

  /** The hits of list 0 (key → label and count), at most about `maxHits`. */
  scan(tokens: readonly string[], maxHits = this.maxHits[0]!): ScanHits {
    if (maxHits === this.maxHits[0]) return this.run(tokens, this.maxHits)[0]!;
    const caps = [...this.maxHits];
    caps[0] = maxHits;
    return this.run(tokens, caps)[0]!;
  }

  /** The hits of every list in `tokens`, computed once per token array. */
  scanLists(tokens: readonly string[]): ScanHits[] {
    let r = this.scans.get(tokens);
    if (!r) {
      r = this.run(tokens, this.maxHits);
      this.scans.set(tokens, r);
    }
    return r;
  }

  private run(tokens: readonly string[], maxHits: readonly number[]): ScanHits[] {
    const lists = maxHits.length;
    const out: ScanHits[] = [];
    for (let l = 0; l < lists; l++) out.push(new Map());
    const hits = new Array<number>(lists).fill(0);
    // A list stops once its hits reached its bound at the start of a token (its hits at that
    // token all count), as a scan of that list alone would. Decided at the list's first entry of
    // each token: nothing before it in the token changes the list's hits.
    const decidedAt = new Array<number>(lists).fill(-1);
    const open = new Array<boolean>(lists).fill(true);
    const byFirst = this.byFirst;
    const stems = this.stems.length === 0 ? undefined : this.stems;
    const fewStems = this.stems.length <= 8;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      const fl = byFirst.get(t);
      if (fl !== undefined) {
        for (const e of fl) {
          const l = e.list;
          if (decidedAt[l] !== i) {
            decidedAt[l] = i;
            open[l] = hits[l]! < maxHits[l]!;
          }
          if (!open[l]) continue;
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
            const m = out[l]!;
            const prev = m.get(e.key);
            if (prev) prev.count++;
            else m.set(e.key, { label: e.label, count: 1 });
            hits[l]!++;
          }
        }
      }
      if (stems !== undefined && t.length >= 3) {
        const sl = fewStems ? stems : this.stemsByPrefix.get(t.slice(0, 3));
        if (sl !== undefined) {
          for (const e of sl) {
            if (!t.startsWith(e.rest[0]!)) continue;
            const l = e.list;
            if (decidedAt[l] !== i) {
              decidedAt[l] = i;
              open[l] = hits[l]! < maxHits[l]!;
            }
            if (!open[l]) continue;
            const m = out[l]!;
            const prev = m.get(e.key);
            if (prev) prev.count++;
            else m.set(e.key, { label: e.label, count: 1 });
            hits[l]!++;
          }
        }
      }
    }
    return out;
  }
}
