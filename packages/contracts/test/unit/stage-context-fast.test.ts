import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ANALYZER_STATUSES,
  StageContext,
  safeParseStageContext,
  THREAT_LEVELS,
} from '../../src/index.ts';
import { expectSameResult } from './canon.ts';

function sameAsZod(input: unknown): boolean {
  return expectSameResult(safeParseStageContext(input), StageContext.safeParse(input));
}

const result = {
  analyzer_id: 'urls',
  status: 'success',
  is_phishing: true,
  confidence: 0.9,
  threat_level: 'high',
  indicators: [{ type: 'ip_url', value: 'http://10.0.0.1/', confidence: 0.8 }],
  attempts: 1,
  duration_ms: 1.5,
};

describe('safeParseStageContext: exactly StageContext.safeParse', () => {
  it('matches zod on hand-made stages', () => {
    const ok: unknown[] = [
      { providers: {}, analyzers: {} },
      { analyzers: { urls: result }, providers: { directory: { vip: true } }, extra: 1 },
      { providers: {}, analyzers: { a: { ...result, summary: 's', cached: false, x: 1 } } },
      { providers: {}, analyzers: { a: { ...result, analyzer_details: { symbols: ['X'] } } } },
    ];
    for (const c of ok) expect(sameAsZod(c)).toBe(true);
    const bad: unknown[] = [
      null,
      [],
      { providers: {} },
      { providers: {}, analyzers: { a: { ...result, status: 'ok' } } },
      { providers: {}, analyzers: { a: { ...result, attempts: 1.5 } } },
      { providers: {}, analyzers: { a: { ...result, duration_ms: -1 } } },
      {
        providers: {},
        analyzers: { a: { ...result, indicators: [{ type: 'A', value: '', confidence: 1 }] } },
      },
      { providers: {}, analyzers: { a: { ...result, analyzer_details: [] } } },
    ];
    for (const c of bad) expect(sameAsZod(c)).toBe(false);
    // keys holding undefined and unusual objects are left to zod, which decides
    for (const c of [
      { providers: {}, analyzers: { a: { ...result, summary: undefined, cached: undefined } } },
      { providers: {}, analyzers: { a: { ...result, analyzer_details: undefined } } },
      { providers: Object.create(null), analyzers: {} },
      { providers: {}, analyzers: JSON.parse(`{"__proto__": ${JSON.stringify(result)}}`) },
    ])
      sameAsZod(c);
  });

  it('matches zod on generated stages (property)', () => {
    const odd = fc.constantFrom(undefined, null, 0, '', 'x', [], {}, true, -1, Number.NaN);
    const analyzerResult = fc.record(
      {
        analyzer_id: fc.oneof(fc.string({ maxLength: 4 }), odd),
        status: fc.oneof(fc.constantFrom(...ANALYZER_STATUSES), odd),
        is_phishing: fc.oneof(fc.boolean(), odd),
        confidence: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), odd),
        threat_level: fc.oneof(fc.constantFrom(...THREAT_LEVELS), odd),
        summary: fc.oneof(fc.string({ maxLength: 4 }), odd),
        indicators: fc.oneof(
          fc.array(
            fc.record({
              type: fc.oneof(fc.stringMatching(/^[a-z_]{1,6}$/), odd),
              value: fc.oneof(fc.string({ maxLength: 4 }), odd),
              confidence: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), odd),
            }),
            { maxLength: 3 },
          ),
          odd,
        ),
        analyzer_details: fc.oneof(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue()), odd),
        attempts: fc.oneof(fc.nat(5), odd, fc.constant(1.5)),
        duration_ms: fc.oneof(fc.double({ min: 0, max: 1e6, noNaN: true }), odd),
        cached: fc.oneof(fc.boolean(), odd),
      },
      {
        requiredKeys: [
          'analyzer_id',
          'status',
          'is_phishing',
          'confidence',
          'threat_level',
          'indicators',
          'attempts',
          'duration_ms',
        ],
      },
    );
    const stage = fc.record(
      {
        providers: fc.oneof(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue()), odd),
        analyzers: fc.oneof(
          fc.dictionary(fc.string({ maxLength: 4 }), analyzerResult, { maxKeys: 3 }),
          odd,
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(stage, (s) => void sameAsZod(s)),
      { numRuns: 3000 },
    );
  });
});
