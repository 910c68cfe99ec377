import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostileJson, hostileText } from '../../../../test/support/hostile-arbitraries.ts';
import { storableJson, storableParams, storableText } from '../../src/store/storable-text.ts';

/**
 * The store's one boundary of text it cannot hold (issue 28, ADR 014): U+0000 and unpaired
 * surrogates become their escapes as visible text, the same whether a string is stored as text
 * or inside JSON. The PostgreSQL and PGlite suites (campaigns-suite, store-conformance) store it.
 */
const text = fc.oneof(
  hostileText(10),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('\u0000', '\ud800', '\udc00', '\ud83d\ude00', 'a\\u0000', '\\\\u0000'),
);

const storable = (s: string) =>
  !s.includes('\u0000') && (s as string & { isWellFormed(): boolean }).isWellFormed();

describe('storable text', () => {
  it('names U+0000 and a lone surrogate as visible escapes; keeps pairs and other text', () => {
    expect(storableText('a\u0000b')).toBe('a\\u0000b');
    expect(storableText('x\ud800y\udc01')).toBe('x\\ud800y\\udc01');
    expect(storableText('ok \ud83d\ude00 \\u0000')).toBe('ok \ud83d\ude00 \\u0000');
    expect(storableJson('{"a":"\\u0000","b":"\\ud83d\\ude00","c":"\\\\u0000"}')).toBe(
      '{"a":"\\\\u0000","b":"\\ud83d\\ude00","c":"\\\\u0000"}',
    );
    expect(storableJson('["\\udc00\\ud800"]')).toBe('["\\\\udc00\\\\ud800"]');
  });

  it('a string reads back the same from text and from JSON, and is storable', () => {
    fc.assert(
      fc.property(text, (s) => {
        const t = storableText(s);
        expect(storable(t)).toBe(true);
        expect(storableText(t)).toBe(t);
        const j = storableJson(JSON.stringify(s));
        expect(storable(j)).toBe(true);
        expect(JSON.parse(j)).toBe(t);
      }),
      { numRuns: 2000 },
    );
  });

  it('any JSON value: its storable text parses to the value with each string made storable', () => {
    const deep = (v: unknown): unknown => {
      if (typeof v === 'string') return storableText(v);
      if (Array.isArray(v)) return v.map(deep);
      if (v !== null && typeof v === 'object')
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [storableText(k), deep(x)]));
      return v;
    };
    fc.assert(
      fc.property(fc.oneof(hostileJson, fc.jsonValue()), (v) => {
        const t = JSON.stringify(v);
        if (t === undefined) return;
        expect(JSON.parse(storableJson(t))).toEqual(JSON.parse(JSON.stringify(deep(v))));
      }),
      { numRuns: 1000 },
    );
  });

  it('query parameters: strings, text arrays and objects; the same array when nothing changes', () => {
    const clean = ['a', 1, null, ['b'], new Date(0)];
    expect(storableParams(clean)).toBe(clean);
    expect(storableParams(['a\u0000', ['b\u0000'], { c: '\u0000' }])).toEqual([
      'a\\u0000',
      ['b\\u0000'],
      '{"c":"\\\\u0000"}',
    ]);
  });
});
