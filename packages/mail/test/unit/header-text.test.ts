import fc from 'fast-check';
import libmime from 'libmime';
import { describe, expect, it } from 'vitest';
import { binaryToText, headerLineValue, stripControls } from '../../src/header-text.ts';

/** headerLineValue's rules spelled out step by step, without its shortcut for plain ASCII. */
function reference(line: string): string {
  const colon = line.indexOf(':');
  let v = colon >= 0 ? line.slice(colon + 1) : line;
  v = v.replace(/\r?\n(?=[ \t])/g, '').replace(/\r?\n/g, ' ');
  v = binaryToText(v);
  if (v.includes('=?')) {
    try {
      v = libmime.decodeWords(v);
    } catch {
      // keep the undecoded text
    }
  }
  return stripControls(v)
    .replace(/[\r\n]+/g, ' ')
    .trim();
}

describe('headerLineValue', () => {
  it.each([
    ['Subject: plain words  ', 'plain words'],
    ['Received: from a\r\n\tby b\r\n  with c', 'from a\tby b  with c'],
    ['Subject: =?utf-8?q?caf=C3=A9?= ok', 'café ok'],
    ['X-Bytes: caf\u00c3\u00a9', 'café'],
    ['X-Latin1: caf\u00e9', 'café'],
    ['X-Ctl: a\u0001b\u007fc\rd', 'abc d'],
    ['no colon at all', 'no colon at all'],
  ])('%j → %j', (line, value) => {
    expect(headerLineValue(line)).toBe(value);
    expect(reference(line)).toBe(value);
  });

  it('answers what the step-by-step rules answer for any line', () => {
    const piece = fc.oneof(
      fc.constantFrom(
        ':',
        ' ',
        '\t',
        '\r',
        '\n',
        '\r\n ',
        '\r\n\t',
        '=?',
        '?=',
        '=?utf-8?q?',
        '=?x?b?',
      ),
      fc.constantFrom(
        '\u0000',
        '\u0007',
        '\u007f',
        '\u00c3\u00a9',
        '\u00e9',
        '\u00ff',
        '=41',
        'Zz',
      ),
      fc.string({ maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (parts) => {
        const line = parts.join('');
        expect(headerLineValue(line)).toBe(reference(line));
      }),
      { numRuns: 3000 },
    );
  });
});
