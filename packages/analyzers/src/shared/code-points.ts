/**
 * Properties of code points (letter or number, script) learnt on first sight with one regular
 * expression test per distinct code point, then read from a table: loops over text stay free of
 * regular expressions and match objects.
 */
class CodePointTable {
  /** Values of the BMP code points; 0 while not yet learnt. */
  readonly bmp = new Uint8Array(0x10000);
  private readonly astral = new Map<number, number>();

  /**
   * `classify` answers a value from 1 to 255 for one code point; `surrogate` is the value of a lone
   * surrogate (a valid surrogate pair is classified as its code point).
   */
  constructor(
    private readonly classify: (codePoint: string) => number,
    surrogate: number,
  ) {
    for (let c = 0; c < 0x80; c++) this.bmp[c] = classify(String.fromCharCode(c));
    this.bmp.fill(surrogate, 0xd800, 0xe000);
  }

  /** The value of the code point that starts at `i` of `s`, whose first code unit is `c`. */
  at(s: string, i: number, c: number): number {
    const k = this.bmp[c]!;
    if (k === 0) {
      const learnt = this.classify(String.fromCharCode(c));
      this.bmp[c] = learnt;
      return learnt;
    }
    if (c < 0xd800 || c > 0xdbff || i + 1 >= s.length) return k;
    const d = s.charCodeAt(i + 1);
    if (d < 0xdc00 || d > 0xdfff) return k;
    const cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
    let a = this.astral.get(cp);
    if (a === undefined) {
      a = this.classify(String.fromCodePoint(cp));
      this.astral.set(cp, a);
    }
    return a;
  }
}

/** Word classes: OTHER, LETTER (\p{L}) or NUMBER (\p{N}); a lone surrogate is OTHER. */
export const OTHER = 1;
export const LETTER = 2;
const NUMBER = 3;
const IS_LETTER = /^\p{L}$/u;
const IS_NUMBER = /^\p{N}$/u;
export const WORD_CLASSES = new CodePointTable(
  (ch) => (IS_LETTER.test(ch) ? LETTER : IS_NUMBER.test(ch) ? NUMBER : OTHER),
  OTHER,
);

/** Scripts that matter for look-alike letters: LATIN, CYRILLIC_GREEK or OTHER_SCRIPT. */
const OTHER_SCRIPT = 1;
export const LATIN = 2;
export const CYRILLIC_GREEK = 3;
const IS_LATIN = /^\p{Script=Latin}$/u;
const IS_CYRILLIC_GREEK = /^[\p{Script=Cyrillic}\p{Script=Greek}]$/u;
export const SCRIPTS = new CodePointTable(
  (ch) => (IS_LATIN.test(ch) ? LATIN : IS_CYRILLIC_GREEK.test(ch) ? CYRILLIC_GREEK : OTHER_SCRIPT),
  OTHER_SCRIPT,
);
