import { describe, expect, it } from 'vitest';
import { insertedNoise, visibleBelow } from '../../src/content/analyzer.ts';
import { wordsOf } from '../../src/content/signals.ts';
import { type Brand, brandOwning, hostInList, loadLexicons } from '../../src/shared/lexicons.ts';
import { countMixedScriptWords, normalizeForMatch } from '../../src/shared/normalize.ts';
import { MAX_TOKENS, PhraseIndex, tokenize } from '../../src/shared/phrase-index.ts';
import {
  editDistance,
  INTERNAL_FOLD,
  skeleton,
  withinOneEdit,
} from '../../src/shared/similarity.ts';

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
  mixedScriptWords: (text: string) => {
    const bounded = text.slice(0, 60_000);
    if (!/[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(bounded)) return 0;
    let n = 0;
    for (const m of bounded.matchAll(/[\p{L}]{3,}/gu)) {
      const w = m[0];
      if (/\p{Script=Latin}/u.test(w) && /[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(w)) n++;
    }
    return n;
  },
  insertedNoise: (text: string) => {
    const counts = new Map<string, number>();
    for (const m of text.matchAll(/(?<=[a-z])[A-Z0-9]{6,16}(?=[a-z])/g)) {
      const t = m[0];
      if (!/[0-9]/.test(t) || !/[A-Z]/.test(t)) continue;
      const n = (counts.get(t) ?? 0) + 1;
      if (n >= 5) return t;
      counts.set(t, n);
    }
    return undefined;
  },
  /** The words of a text as content compared a text part with the HTML's text before. */
  wordsOf: (text: string, max: number) => {
    const out: string[] = [];
    for (const w of text
      .slice(0, 50_000)
      .toLowerCase()
      .split(/[^\p{L}]+/u)) {
      if (w.length >= 3) out.push(w);
      if (out.length >= max) break;
    }
    return out;
  },
  /** A phrase list scanned alone: [tokens, key, stem] in the order added. */
  scan: (phrases: [string[], string, boolean][], tokens: string[], maxHits: number) => {
    const out = new Map<string, number>();
    let hits = 0;
    for (let i = 0; i < tokens.length && hits < maxHits; i++) {
      for (const [words, key, stem] of phrases) {
        const last = words.length - 1;
        const found = words.every((w, j) => {
          const t = tokens[i + j];
          if (t === undefined) return false;
          if (!stem || j < last) return t === w;
          return (words.length > 1 || w.length >= 3) && t.startsWith(w);
        });
        if (found) {
          out.set(key, (out.get(key) ?? 0) + 1);
          hits++;
        }
      }
    }
    return out;
  },
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

  it('a phrase index reads the words of tokenize, as numbers of its vocabulary', () => {
    const index = new PhraseIndex();
    index.add(["don't", 'ab', '𝘿a'], 'a', 'x');
    index.add(['٣٤', 'é'], 'b', 'x');
    for (const t of ["don't ab 𝘿a ٣٤ é don't", ...strings(TEXT_ALPHABET, 3000, 24, 6)]) {
      const words = index.read(t);
      const found = Array.from({ length: words.count }, (_, i) =>
        t.slice(words.starts[i], words.ends[i]),
      );
      expect(found).toEqual(reference.tokenize(t));
      const known = ["don't", 'ab', '𝘿a', '٣٤', 'é'];
      found.forEach((w, i) => {
        expect(words.ids[i]! >= 0).toBe(known.includes(w));
      });
    }
    expect(index.read('ab '.repeat(MAX_TOKENS + 10)).count).toBe(MAX_TOKENS);
  });

  it.each([1, 12])(
    'ASCII text read as is answers as its normalised form does (%i stems)',
    (stems) => {
      const index = new PhraseIndex([500, 2]);
      index.add(["don't", 'stop'], 'a', 'x');
      index.add(['verif'], 'b', 'x', true);
      index.add(['password', 'expir'], 'c', 'x', true);
      index.add(['abc'], 'd', 'y', false, 1);
      for (let k = 1; k < stems; k++) index.add([`don't${'s'.repeat(k)}`], `s${k}`, 'z', true);
      const alphabet = [
        'Don`t',
        "don't",
        'STOP',
        ' stop',
        'Verified',
        'VERIF',
        'password',
        ' EXPIRES',
      ];
      const more = ['abc', 'ABC', ' ', '\n', '\t\t', '`', "'", 'x', '9'];
      for (const t of strings([...alphabet, ...more], 3000, 12, 9)) {
        const folded = index.readAscii(t);
        const normal = index.read(normalizeForMatch(t));
        expect([...folded.ids]).toEqual([...normal.ids]);
        expect(index.scanLists(folded).map((m) => [...m])).toEqual(
          index.scanLists(normal).map((m) => [...m]),
        );
      }
    },
  );

  it('readAscii of a text that is not ASCII after all reads its words all the same', () => {
    const index = new PhraseIndex();
    index.add(['verify', 'now'], 'v', 'x');
    const t = 'Café VERIFY now, naïve 𝐁old';
    const words = index.readAscii(t);
    const bounds = (w: ReturnType<typeof index.read>) =>
      [...w.starts].map((s, i) => t.slice(s, w.ends[i]));
    expect(bounds(words)).toEqual(tokenize(t));
    expect([...index.scan(words).keys()]).toEqual(['v']);
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

  it('countMixedScriptWords counts letter runs of 3+ mixing Latin with Cyrillic or Greek', () => {
    const alphabet = ['a', 'P', 'а', 'р', 'ο', 'Ω', 'é', '1', ' ', '-', '𝐚', '\ud835', '漢', "'"];
    for (const t of ['Pаypal аccount vеrify', 'ααα abc Ωmega', ...strings(alphabet, 4000, 16, 3)]) {
      expect(countMixedScriptWords(t)).toBe(reference.mixedScriptWords(t));
    }
  });

  it('insertedNoise finds a capitals-and-digits token stuffed into five words', () => {
    const stuffed = 'do9R4ZET0AYQwn lo9R4ZET0AYQad fo9R4ZET0AYQr yo9R4ZET0AYQu an9R4ZET0AYQd';
    expect(insertedNoise(stuffed)).toBe('9R4ZET0AYQ');
    const alphabet = ['a', 'b', 'A', 'B', '1', '2', ' ', 'é', 'AB12CD', 'x9Y8Z7Wq'];
    for (const t of [stuffed, ...strings(alphabet, 4000, 40, 4)]) {
      expect(insertedNoise(t)).toBe(reference.insertedNoise(t));
    }
  });

  it('visibleBelow compares the collapsed, trimmed visible text with a limit', () => {
    const alphabet = [
      'a',
      ' ',
      '\n',
      '\t',
      '\u00a0',
      '\u2003',
      '\u3000',
      '\ufeff',
      '\u200b',
      '😀',
      'é',
    ];
    const texts = strings(alphabet, 2000, 14, 7);
    texts.forEach((html, i) => {
      const body = i % 3 === 0 ? undefined : texts[(i * 7) % texts.length];
      for (const limit of [0, 1, 3, 6, 12]) {
        const reference = html.replace(/\s+/g, ' ').trim().length + (body?.trim().length ?? 0);
        expect(visibleBelow(html, body, limit)).toBe(reference < limit);
      }
    });
  });

  it('a phrase index finds multi-word phrases and stems', () => {
    const index = new PhraseIndex();
    index.add(['verify', 'your', 'account'], 'a', 'credential');
    index.add(['password', 'expir'], 'b', 'credential', true);
    index.add(['sweepstake'], 'c', 'reward', true);
    index.add(['ab'], 'd', 'reward', true); // a stem shorter than 3 characters never matches
    const hits = index.scan(
      index.read('verify your account now: password expires, sweepstakes and sweepstake ab abc'),
    );
    expect([...hits]).toEqual([
      ['a', { label: 'credential', count: 1 }],
      ['b', { label: 'credential', count: 1 }],
      ['c', { label: 'reward', count: 2 }],
    ]);
  });

  it('an index of several lists scans each exactly as if it were alone, hit bounds included', () => {
    const phrases: [string[], boolean][] = [
      [['a'], false],
      [['a', 'b'], false],
      [['b', 'a'], false],
      [['abc'], true],
      [['a', 'ab'], true],
      [['b'], false],
      [['c', 'c', 'a'], false],
      [['ab'], true],
    ];
    const caps = [3, 1, 500];
    const shared = new PhraseIndex(caps);
    const lists: [string[], string, boolean][][] = caps.map(() => []);
    phrases.forEach(([tokens, stem], n) => {
      for (let list = 0; list < caps.length; list++) {
        if ((n + list) % 3 === 0) continue; // lists share some phrases, not all
        shared.add(tokens, `${n}`, `label${n}`, stem, list);
        lists[list]!.push([tokens, `${n}`, stem]);
      }
    });
    for (const text of strings(['a ', 'b ', 'c ', 'abc ', 'abcd ', 'ab '], 2000, 14, 5)) {
      const tokens = tokenize(text);
      const all = shared.scanLists(shared.read(text));
      caps.forEach((cap, list) => {
        const found = new Map([...all[list]!].map(([k, v]) => [k, v.count]));
        // the reference lists single-token stems after the other phrases of a token
        const ordered = [
          ...lists[list]!.filter(([w, , stem]) => !(stem && w.length === 1)),
          ...lists[list]!.filter(([w, , stem]) => stem && w.length === 1),
        ];
        expect(found).toEqual(reference.scan(ordered, tokens, cap));
      });
    }
  });

  it('wordsOf reads the runs of letters of the lower-cased text, as splitting it did', () => {
    const texts = strings(TEXT_ALPHABET, 3000, 24, 11);
    texts.push(
      'ΟΔΟΣ ΟΔΟΣ.ΟΔΟΣ',
      'İstanbul İİİ',
      'a'.repeat(60_000),
      `${'word '.repeat(20_000)}end`,
    );
    for (const t of texts) {
      for (const max of [1, 3, 60, 5_000])
        expect(wordsOf(t, max)).toEqual(reference.wordsOf(t, max));
    }
  });

  it('brandOwning answers the first brand one of whose domains is the domain or a parent of it', () => {
    const brand = (id: string, domains: string[]): Brand => ({
      id,
      names: [],
      case_names: [],
      domains,
      sends_for_anyone: false,
      source: 'test',
    });
    const lists = [
      [brand('a', ['b.c.d']), brand('b', ['c.d', 'x.y']), brand('c', ['d', 'b.c.d'])],
      [brand('a', ['.c.d', 'c.d.']), brand('b', ['']), brand('c', ['a..b', 'b..c.d'])],
      loadLexicons().brands,
    ];
    const hosts = [
      'a.b.c.d',
      'b.c.d',
      'c.d',
      'd',
      '',
      '.',
      'a..b',
      '.a.b',
      'a.b.',
      'b..c.d',
      'x.y',
    ];
    const real = [
      ...['paypal.com', 'www.paypal.com', 'mail.google.com', 'example.org', 'paypal.com.evil'],
      // every shipped brand domain, below it, and a name that only ends like it
      ...loadLexicons().brands.flatMap((b) => b.domains.flatMap((x) => [x, `www.${x}`, `x${x}`])),
    ];
    for (const brands of lists) {
      for (const d of [...hosts, ...real]) {
        const reference = brands.find((b) =>
          b.domains.some((bd) => d === bd || d.endsWith(`.${bd}`)),
        );
        expect(brandOwning(brands, d)).toBe(reference);
      }
    }
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

  it('withinOneEdit is an edit distance of at most one', () => {
    const words = strings(['a', 'b', 'c', '😀'], 3000, 6, 8);
    words.forEach((a, i) => {
      const b = words[(i * 13 + 5) % words.length]!;
      for (const [x, y] of [
        [a, b],
        [a, a.slice(1)],
        [a, `${a}c`],
        [a, a.replace('a', 'b')],
      ] as const) {
        expect(withinOneEdit(x, y)).toBe(editDistance(x, y, 1) <= 1);
      }
    });
  });

  it('the internal-domain fold is narrower than the look-alike fold', () => {
    expect(skeleton('c1ick')).toBe('dlck');
    expect(skeleton('c1ick', INTERNAL_FOLD)).toBe('cllck');
    expect(skeleton('g00gle9')).toBe('googleg');
    expect(skeleton('g00gle9', INTERNAL_FOLD)).toBe('google9');
  });
});
