/**
 * Fast phrase matching on word tokens: a phrase list is indexed by its first token, so a text is
 * scanned once in O(tokens), whatever the number of phrases. A trailing `*` on a phrase's last word
 * matches any word that starts with it ("verif*"). A text's words are read as numbers (their place
 * in the vocabulary of the phrases' words, or -1): no string per word, no lookup by string.
 */

import { LETTER, OTHER, WORD_CLASSES } from './code-points.ts';

const BMP = WORD_CLASSES.bmp;

/** Max tokens scanned per text (keeps matching bounded on huge bodies). */
export const MAX_TOKENS = 12_000;

/** FNV-1a over UTF-16 code units: the hash of the vocabulary's table. */
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

function hashOf(word: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), FNV_PRIME);
  return h;
}

/** The words phrases use, each with a number; found in a text by hash without slicing it. */
class Vocabulary {
  private readonly words: string[] = [];
  private readonly hashes: number[] = [];
  private readonly ids = new Map<string, number>();
  /** Open addressing (linear probing) of word numbers by hash; -1 is a free slot. */
  private table = new Int32Array(64).fill(-1);
  /** Changes whenever a word is added: token ids read before are stale. */
  version = 0;

  get size(): number {
    return this.words.length;
  }

  add(word: string): number {
    const known = this.ids.get(word);
    if (known !== undefined) return known;
    const id = this.words.length;
    this.words.push(word);
    this.hashes.push(hashOf(word));
    this.ids.set(word, id);
    this.version++;
    if (this.words.length * 2 > this.table.length) {
      this.table = new Int32Array(this.table.length * 2).fill(-1);
      for (let w = 0; w < this.words.length; w++) this.place(w);
    } else this.place(id);
    return id;
  }

  private place(id: number): void {
    const mask = this.table.length - 1;
    let slot = this.hashes[id]! & mask;
    while (this.table[slot] !== -1) slot = (slot + 1) & mask;
    this.table[slot] = id;
  }

  /**
   * The number of the word at `start`…`end` of `text` (folded with `fold`), whose hash is `h`; -1
   * when no phrase uses it.
   */
  find(text: string, start: number, end: number, h: number, fold: boolean): number {
    const table = this.table;
    const mask = table.length - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const id = table[slot]!;
      if (id === -1) return -1;
      if (this.hashes[id] === h) {
        const w = this.words[id]!;
        if (w.length === end - start && startsWithAt(text, w, start, fold)) return id;
      }
    }
  }
}

/**
 * ASCII text is read as `normalizeForMatch` would make it without making it: upper-case letters
 * lower-cased and the backtick read as an apostrophe (white space does not change words).
 */
function foldAscii(c: number): number {
  return c >= 65 && c <= 90 ? c + 32 : c === 96 ? 39 : c;
}

/** Whether `word` stands in `text` at `at` (`text` read folded when `fold`). */
function startsWithAt(text: string, word: string, at: number, fold: boolean): boolean {
  if (!fold) return text.startsWith(word, at);
  if (at + word.length > text.length) return false;
  for (let k = 0; k < word.length; k++) {
    if (foldAscii(text.charCodeAt(at + k)) !== word.charCodeAt(k)) return false;
  }
  return true;
}

/** The words of a text as a phrase index reads them (the words of `tokenize(text)`, in order). */
export interface TokenIds {
  /** The text read: normalised, or ASCII read folded (`fold`). */
  readonly text: string;
  readonly fold: boolean;
  readonly count: number;
  /** Per word: its number in the vocabulary, -1 when no phrase uses it. */
  readonly ids: Int32Array;
  /** Per word: where it starts and ends in `text`. */
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  /** The vocabulary and its version the words were read with. */
  readonly vocabulary: Vocabulary;
  readonly version: number;
}

/** Room for the words of one text, reused: a text's words are copied out at the end. */
let scratchIds = new Int32Array(256);
let scratchStarts = new Int32Array(256);
let scratchEnds = new Int32Array(256);

function grow(): void {
  const n = Math.min(scratchIds.length * 2, MAX_TOKENS);
  const ids = new Int32Array(n);
  ids.set(scratchIds);
  const starts = new Int32Array(n);
  starts.set(scratchStarts);
  const ends = new Int32Array(n);
  ends.set(scratchEnds);
  scratchIds = ids;
  scratchStarts = starts;
  scratchEnds = ends;
}

/** Puts the word at `at` of the scratch arrays: its id and where it starts and ends. */
function record(at: number, id: number, start: number, end: number): void {
  if (at === scratchIds.length) grow();
  scratchIds[at] = id;
  scratchStarts[at] = start;
  scratchEnds[at] = end;
}

/**
 * The words of `text` (exactly those of `tokenize(text)`) as numbers of `vocabulary`; with `fold`,
 * `text` is ASCII and read as `normalizeForMatch(text)` (see foldAscii).
 */
function readWords(text: string, vocabulary: Vocabulary, fold: boolean): TokenIds {
  let count = fold ? scanAscii(text, vocabulary) : -1;
  if (count === -1) count = scan(text, vocabulary, fold);
  return {
    text,
    fold,
    count,
    ids: scratchIds.slice(0, count),
    starts: scratchStarts.slice(0, count),
    ends: scratchEnds.slice(0, count),
    vocabulary,
    version: vocabulary.version,
  };
}

/**
 * readWords of ASCII text read folded, into the scratch arrays: one table lookup per code unit, no
 * surrogates to mind. Answers the number of words, or -1 at the first code unit outside ASCII
 * (the caller then reads the text with `scan`).
 */
function scanAscii(text: string, vocabulary: Vocabulary): number {
  const n = text.length;
  let count = 0;
  let i = 0;
  while (i < n && count < MAX_TOKENS) {
    let c = text.charCodeAt(i);
    if (c >= 0x80) return -1;
    if (BMP[c] === OTHER) {
      i++;
      continue;
    }
    const start = i;
    let h = Math.imul(FNV_OFFSET ^ foldAscii(c), FNV_PRIME);
    for (i++; i < n; i++) {
      c = text.charCodeAt(i);
      if (c >= 0x80) return -1;
      if (BMP[c] === OTHER) break;
      h = Math.imul(h ^ foldAscii(c), FNV_PRIME);
    }
    // an apostrophe (or a backtick, read as one) followed by letters belongs to the word ("don't")
    c = i + 1 < n ? text.charCodeAt(i) : 0;
    if (c === 39 || c === 96) {
      let j = i + 1;
      let h2 = Math.imul(h ^ 39, FNV_PRIME);
      for (; j < n; j++) {
        c = text.charCodeAt(j);
        if (c >= 0x80) return -1;
        if (BMP[c] !== LETTER) break;
        h2 = Math.imul(h2 ^ foldAscii(c), FNV_PRIME);
      }
      if (j > i + 1) {
        i = j;
        h = h2;
      }
    }
    record(count++, vocabulary.find(text, start, i, h, true), start, i);
  }
  return count;
}

/** readWords of any text into the scratch arrays; answers the number of words. */
function scan(text: string, vocabulary: Vocabulary, fold: boolean): number {
  const n = text.length;
  let count = 0;
  let i = 0;
  while (i < n && count < MAX_TOKENS) {
    let c = text.charCodeAt(i);
    let k = c < 0x80 ? BMP[c]! : WORD_CLASSES.at(text, i, c);
    if (k === OTHER) {
      i++;
      continue;
    }
    const start = i;
    let h = Math.imul(FNV_OFFSET ^ (fold ? foldAscii(c) : c), FNV_PRIME);
    // a letter or number whose first code unit is a high surrogate is a surrogate pair
    if (c >= 0xd800 && c <= 0xdbff) {
      h = Math.imul(h ^ text.charCodeAt(i + 1), FNV_PRIME);
      i += 2;
    } else i++;
    while (i < n) {
      c = text.charCodeAt(i);
      k = c < 0x80 ? BMP[c]! : WORD_CLASSES.at(text, i, c);
      if (k === OTHER) break;
      h = Math.imul(h ^ (fold ? foldAscii(c) : c), FNV_PRIME);
      if (c >= 0xd800 && c <= 0xdbff) {
        h = Math.imul(h ^ text.charCodeAt(i + 1), FNV_PRIME);
        i += 2;
      } else i++;
    }
    // an apostrophe followed by letters belongs to the word ("don't")
    c = i + 1 < n ? text.charCodeAt(i) : 0;
    if (c === 39 || (fold && c === 96)) {
      let j = i + 1;
      let h2 = Math.imul(h ^ 39, FNV_PRIME);
      while (j < n) {
        c = text.charCodeAt(j);
        k = c < 0x80 ? BMP[c]! : WORD_CLASSES.at(text, j, c);
        if (k !== LETTER) break;
        h2 = Math.imul(h2 ^ (fold ? foldAscii(c) : c), FNV_PRIME);
        if (c >= 0xd800 && c <= 0xdbff) {
          h2 = Math.imul(h2 ^ text.charCodeAt(j + 1), FNV_PRIME);
          j += 2;
        } else j++;
      }
      if (j > i + 1) {
        i = j;
        h = h2;
      }
    }
    record(count++, vocabulary.find(text, start, i, h, fold), start, i);
  }
  return count;
}

/** A vocabulary without words: reading with it finds every word's bounds only. */
const NO_WORDS = new Vocabulary();

/**
 * The word tokens of `text`, at most MAX_TOKENS: exactly the matches of
 * `/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu`, found in one pass over the code units without match objects.
 */
export function tokenize(text: string): string[] {
  const words = readWords(text, NO_WORDS, false);
  const out = new Array<string>(words.count);
  for (let i = 0; i < words.count; i++) out[i] = text.slice(words.starts[i], words.ends[i]);
  return out;
}

interface Entry {
  key: string;
  label: string;
  /** The phrase list the entry belongs to. */
  list: number;
  /** Numbers of the words after the first. */
  rest: number[];
  /** The phrase ended with *: its last word is a prefix (`last`). */
  stem: boolean;
  last: string;
}

/** What a scan found: per key, its label and how many times it was found. */
export type ScanHits = Map<string, { label: string; count: number }>;

/** The first 3 characters of the word at `at` (folded with `fold`). */
function prefix3(text: string, at: number, fold: boolean): string {
  const p = text.slice(at, at + 3);
  return fold ? p.toLowerCase().replaceAll('`', "'") : p;
}

/**
 * One or more phrase lists in one index: a text is scanned once for all of them (one lookup per
 * word), each list with its own hits and its own bound on hits, exactly as if it were scanned
 * alone.
 */
export class PhraseIndex {
  private readonly vocabulary = new Vocabulary();
  /** Phrases by the number of their first word. */
  private readonly byFirst: (Entry[] | undefined)[] = [];
  /**
   * Single-word stems of at least 3 characters, in the order added (a shorter one can never
   * match: stems are looked up by a word's first 3 characters).
   */
  private readonly stems: Entry[] = [];
  /** The same stems by their first 3 characters, used when there are many. */
  private readonly stemsByPrefix = new Map<string, Entry[]>();
  /** Phrases added per list. */
  private readonly sizes: number[];
  /** scanLists answers by the words read (never changed once read). */
  private scans = new WeakMap<TokenIds, ScanHits[]>();

  /** `maxHits`: per list, the number of hits after which a scan stops looking for more. */
  constructor(private readonly maxHits: readonly number[] = [500]) {
    this.sizes = maxHits.map(() => 0);
  }

  /** Phrases added to list 0. */
  get size(): number {
    return this.sizes[0]!;
  }

  /**
   * `tokens` are the phrase's words (`tokenize` of the normalised phrase); `key` is what a hit
   * reports; `list` the phrase list it belongs to.
   */
  add(tokens: string[], key: string, label: string, stem = false, list = 0): void {
    if (tokens.length === 0) return;
    this.sizes[list]!++;
    this.scans = new WeakMap();
    const [first, ...rest] = tokens as [string, ...string[]];
    const last = tokens[tokens.length - 1]!;
    if (stem && rest.length === 0) {
      if (first.length < 3) return;
      const e = { key, label, list, rest: [], stem: true, last };
      this.stems.push(e);
      const k = first.slice(0, 3);
      const sl = this.stemsByPrefix.get(k);
      if (sl) sl.push(e);
      else this.stemsByPrefix.set(k, [e]);
      return;
    }
    const id = this.vocabulary.add(first);
    const e = { key, label, list, rest: rest.map((w) => this.vocabulary.add(w)), stem, last };
    const fl = this.byFirst[id];
    if (fl) fl.push(e);
    else this.byFirst[id] = [e];
  }

  /** The words of a (normalised) text, read for this index. */
  read(text: string): TokenIds {
    return readWords(text, this.vocabulary, false);
  }

  /** The words of `normalizeForMatch(ascii)` for ASCII text, read without normalising it. */
  readAscii(ascii: string): TokenIds {
    return readWords(ascii, this.vocabulary, true);
  }

  /** The hits of list 0 (key → label and count), at most about `maxHits`. */
  scan(words: TokenIds, maxHits = this.maxHits[0]!): ScanHits {
    if (maxHits === this.maxHits[0]) return this.run(this.current(words), this.maxHits)[0]!;
    const caps = [...this.maxHits];
    caps[0] = maxHits;
    return this.run(this.current(words), caps)[0]!;
  }

  /** The hits of every list in `words`, computed once per words read. */
  scanLists(words: TokenIds): ScanHits[] {
    let r = this.scans.get(words);
    if (!r) {
      r = this.run(this.current(words), this.maxHits);
      this.scans.set(words, r);
    }
    return r;
  }

  /** `words` read again when they were read for another index or before words were added. */
  private current(words: TokenIds): TokenIds {
    return words.vocabulary === this.vocabulary && words.version === this.vocabulary.version
      ? words
      : readWords(words.text, this.vocabulary, words.fold);
  }

  private run(words: TokenIds, maxHits: readonly number[]): ScanHits[] {
    const lists = maxHits.length;
    const out: ScanHits[] = [];
    for (let l = 0; l < lists; l++) out.push(new Map());
    const hits = new Array<number>(lists).fill(0);
    // A list stops once its hits reached its bound at the start of a word (its hits at that word
    // all count), as a scan of that list alone would. Decided at the list's first entry of each
    // word: nothing before it in the word changes the list's hits.
    const decidedAt = new Array<number>(lists).fill(-1);
    const open = new Array<boolean>(lists).fill(true);
    const { text, fold, count, ids, starts, ends } = words;
    const byFirst = this.byFirst;
    const stems = this.stems.length === 0 ? undefined : this.stems;
    const fewStems = this.stems.length <= 8;
    for (let i = 0; i < count; i++) {
      const id = ids[i]!;
      const fl = id === -1 ? undefined : byFirst[id];
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
            const at = i + 1 + j;
            if (at >= count) {
              ok = false;
              break;
            }
            if (ids[at] === rest[j]) continue;
            // the last word of a stem phrase: any word that starts with it
            if (
              e.stem &&
              j === rest.length - 1 &&
              ends[at]! - starts[at]! >= e.last.length &&
              startsWithAt(text, e.last, starts[at]!, fold)
            )
              continue;
            ok = false;
            break;
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
      if (stems !== undefined && ends[i]! - starts[i]! >= 3) {
        const sl = fewStems ? stems : this.stemsByPrefix.get(prefix3(text, starts[i]!, fold));
        if (sl !== undefined) {
          for (const e of sl) {
            if (
              ends[i]! - starts[i]! < e.last.length ||
              !startsWithAt(text, e.last, starts[i]!, fold)
            )
              continue;
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
