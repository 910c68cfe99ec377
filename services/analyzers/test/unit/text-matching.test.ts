import { describe, expect, it } from 'vitest';
import { hostInList } from '../../src/content/lexicons.ts';
import { normalizeForMatch } from '../../src/content/normalize.ts';
import { MAX_TOKENS, PhraseIndex, tokenize } from '../../src/content/phrase-index.ts';
import { editDistance, INTERNAL_FOLD, skeleton } from '../../src/urls/similarity.ts';

const INVISIBLE =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: a list of single invisible code points
  /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]/g;

/** The definitions the fast code must agree with. */
const reference = {
  tokenize: (text: string) =>
    [...text.matchAll(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu)].map((m) => m[0]).slice(0, MAX_TOKENS),
  normalize: (text: string) =>
    text
      .slice(0, 60_000)
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .replace(INVISIBLE, '')
      .toLowerCase()
      .replace(/[\u2018\u2019\u02bc`´]/g, "'")
      .replace(/\s+/g, ' '),
  inList: (set: Set<string>, host: string, domain: string) => {
    if (set.has(domain) || set.has(host)) return true;
    const parts = host.split('.');
    for (let i = 1; i < parts.length - 1; i++) if (set.has(parts.slice(i).join('.'))) return true;
    return false;
  },
};

/** Deterministic pseudo-random strings over an alphabet of the characters that matter. */
function strings(alphabet: string[], count: number, maxLen: number, seed = 1): string[] {
  let s = seed;
  const next = (n: number) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
  const out: string[] = [];
  for (let k = 0; k < count; k++) {
    let t = '';
    const len = next(maxLen + 1);
    for (let i = 0; i < len; i++) t += alphabet[next(alphabet.length)];
    out.push(t);
  }
  return out;
}

const TEXT_ALPHABET = [
  'a',
  'Z',
  '7',
  ' ',
  "'",
  '’',
  '`',
  '-',
  '.',
  '\n',
  '\t',
  '\u00a0',
  '\u3000',
  'é',
  'e\u0301',
  'ß',
  'İ',
  'Σ',
  'ﬁ',
  '\u200b',
  '\u00ad',
  '\ufeff',
  '𝘿',
  '𝟙',
  '\ud835',
  '\udc00',
  'д',
  '٣',
  '漢',
  '😀',
];

describe('text matching helpers', () => {
  it('tokenize finds exactly the words of the token pattern', () => {
    for (const t of [
      "don't can't2go rock'n'roll abc' 'x ab''c",
      '𝘿𝙄𝙔 \ud835 x\udc00y 𝟙𝟚 😀word',
      'a\u0301b ٣٤ 漢字',
      ...strings(TEXT_ALPHABET, 3000, 24),
    ]) {
      expect(tokenize(t)).toEqual(reference.tokenize(t));
    }
  });

  it('tokenize stops at MAX_TOKENS', () => {
    expect(tokenize('ab '.repeat(MAX_TOKENS + 10))).toHaveLength(MAX_TOKENS);
  });

  it('normalizeForMatch is NFKD, marks and invisible characters removed, lower case, one space', () => {
    for (const t of [
      'Ｖｅｒｉｆｙ  YOUR\u200b acc\u00adount’s  ﬁle\t\n',
      'plain ascii `quote`   and  tabs\t\tand\r\nlines',
      'x'.repeat(60_010),
      ...strings(TEXT_ALPHABET, 3000, 24, 2),
    ]) {
      expect(normalizeForMatch(t)).toBe(reference.normalize(t));
    }
  });

  it('a phrase index finds multi-word phrases and stems', () => {
    const index = new PhraseIndex();
    index.add(['verify', 'your', 'account'], 'a', 'credential');
    index.add(['password', 'expir'], 'b', 'credential', true);
    index.add(['sweepstake'], 'c', 'reward', true);
    index.add(['ab'], 'd', 'reward', true); // a stem shorter than 3 characters never matches
    const hits = index.scan(
      tokenize('verify your account now: password expires, sweepstakes and sweepstake ab abc'),
    );
    expect([...hits]).toEqual([
      ['a', { label: 'credential', count: 1 }],
      ['b', { label: 'credential', count: 1 }],
      ['c', { label: 'reward', count: 2 }],
    ]);
  });

  it('hostInList checks the domain, the host and every parent of the host', () => {
    const hosts = ['a.b.c.d', 'b.c.d', 'c.d', 'd', '', '.', 'a..b', '.a.b', 'a.b.', 'b..c.d'];
    const lists = [['b.c.d'], ['c.d'], ['d'], [''], ['.'], ['c.d.'], ['.c.d'], ['b..c.d'], ['b.']];
    for (const l of lists) {
      const set = new Set(l);
      for (const h of hosts) {
        for (const d of ['', 'x.y'])
          expect(hostInList(set, h, d)).toBe(reference.inList(set, h, d));
      }
    }
  });

  it('editDistance counts an adjacent swap as two edits, or as one with transpositions', () => {
    expect(editDistance('paypal', 'pyapal', 2)).toBe(2);
    expect(editDistance('paypal', 'pyapal', 2, true)).toBe(1);
    expect(editDistance('example', 'exmaple', 1)).toBe(2);
    expect(editDistance('example', 'exmaple', 1, true)).toBe(1);
    expect(editDistance('', 'ab', 2)).toBe(2);
    expect(editDistance('abcdef', 'uvwxyz', 2)).toBe(3);
  });

  it('the internal-domain fold is narrower than the look-alike fold', () => {
    expect(skeleton('c1ick')).toBe('dlck');
    expect(skeleton('c1ick', INTERNAL_FOLD)).toBe('cllck');
    expect(skeleton('g00gle9')).toBe('googleg');
    expect(skeleton('g00gle9', INTERNAL_FOLD)).toBe('google9');
  });
});
