import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { guessLanguage } from '../../src/guess-language.ts';
import { guessLanguage as legacyGuessLanguage } from '../reference/legacy-guess-language.ts';

// guessLanguage reads ASCII texts with a word loop (keys instead of sliced words); it must answer
// what the implementation kept in test/reference answers, on any text.

const words = [
  'the',
  'and',
  'your',
  'account',
  'please',
  'click',
  'here',
  'THE',
  'Account',
  'der',
  'die',
  'und',
  'nicht',
  'bitte',
  'het',
  'een',
  'van',
  'le',
  'la',
  'les',
  'vous',
  'el',
  'los',
  'usted',
  'il',
  'della',
  'i',
  'w',
  'z',
  'nie',
  'oraz',
  'o',
  'os',
  'para',
  'conta',
  'für',
  'não',
  'você',
  'está',
  'państwa',
  'że',
  'è',
  'más',
  'über',
  'ß',
  'ñ',
  'ã',
  'ł',
  'è',
  'привет',
  '日本語',
  'テキスト',
  '한국어',
  'γεια',
  'مرحبا',
  'שלום',
  'สวัสดี',
  'verylongwordthatisnotastopword',
  'accounts',
  'abcdefghijk',
  'x',
  '42',
  'a1b',
  'e-mail',
  "don't",
];
const seps = [' ', '  ', '\n', ', ', '. ', '-', '\t', '', '!', '\u00a0'];

describe('guessLanguage against test/reference', () => {
  it('answers the same on texts of stop words, other words and scripts', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...words), fc.constantFrom(...seps)), { maxLength: 80 }),
        (parts) => {
          const text = parts.map(([w, s]) => w + s).join('');
          expect(guessLanguage(text)).toBe(legacyGuessLanguage(text));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('answers the same on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        expect(guessLanguage(text)).toBe(legacyGuessLanguage(text));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom(...'the and your to of in is you abc xyz \n.'.split('')),
          maxLength: 600,
        }),
        (text) => {
          expect(guessLanguage(text)).toBe(legacyGuessLanguage(text));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('answers the same past the sample length', () => {
    const long = 'the account and your '.repeat(300);
    expect(guessLanguage(long)).toBe(legacyGuessLanguage(long));
    expect(guessLanguage(`${'x'.repeat(4090)} the and`)).toBe(
      legacyGuessLanguage(`${'x'.repeat(4090)} the and`),
    );
  });
});
