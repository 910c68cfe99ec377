import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AnalyzerAnswer,
  RECOMMENDED_ACTIONS,
  safeParseAnalyzerAnswer,
  THREAT_LEVELS,
} from '../../src/index.ts';
import { expectSameResult } from './canon.ts';

function sameAsZod(input: unknown): void {
  const ours = safeParseAnalyzerAnswer(input);
  const zod = AnalyzerAnswer.safeParse(input);
  expectSameResult(ours, zod);
  if (ours.success && zod.success) {
    // z.unknown() passes detail values through: the same objects, not copies
    const od = ours.data.analyzer_details;
    const zd = zod.data.analyzer_details;
    for (const k of Object.keys(zd ?? {})) expect(od?.[k]).toBe(zd?.[k]);
  }
}

const odd = fc.constantFrom(undefined, null, 0, 1, '', 'x', [], {}, true, Number.NaN);
const probability = fc.oneof(
  fc.double({ min: 0, max: 1 }),
  fc.constantFrom(0, 1, -0, 0.5, -1e-12, 1 + 1e-12, Number.POSITIVE_INFINITY, -1),
  odd,
);
const bool = fc.oneof(fc.boolean(), odd);
const text = (max: number) =>
  fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom('s'.repeat(max), 's'.repeat(max + 1)),
    odd,
  );
const indicatorType = fc.oneof(
  fc.stringMatching(/^[a-z0-9_.-]{1,12}$/),
  fc.string({ maxLength: 6 }),
  fc.constantFrom('a'.repeat(64), 'a'.repeat(65), '', 'Bad', 'a b', 'ok\n'),
  odd,
);
const indicator = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ type: indicatorType, value: text(2000), confidence: probability }),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      { type: indicatorType, value: text(2000), confidence: probability, extra: fc.anything() },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: odd },
);
const valid = { type: 'rule_match', value: 'v', confidence: 0.5 };
const indicators = fc.oneof(
  { weight: 8, arbitrary: fc.array(indicator, { maxLength: 4 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      new Array(1000).fill(valid),
      new Array(1001).fill(valid),
      // biome-ignore lint/suspicious/noSparseArray: a hole must be refused like an undefined item
      [valid, , valid],
    ),
  },
  { weight: 1, arbitrary: odd },
);

const withSymbol = { a: 1, [Symbol('s')]: 2 };
const withHidden = Object.defineProperty({ a: 1 }, 'hidden', { value: 2, enumerable: false });
const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
class Details {
  a = 1;
}
const details = fc.oneof(
  { weight: 6, arbitrary: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue()) },
  {
    weight: 1,
    arbitrary: fc.dictionary(
      fc.constantFrom('1', '0', '10', 'b', 'a', '-1', '1.5', 'constructor', 'toString'),
      fc.anything(),
    ),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom<unknown>(
      withSymbol,
      withHidden,
      nullProto,
      new Details(),
      new Map([['a', 1]]),
      JSON.parse('{"__proto__": {"x": 1}, "a": 2}'),
      { constructor: 'x' },
      { constructor: Object },
      { constructor: Details },
      { a: undefined },
      [],
    ),
  },
  { weight: 1, arbitrary: odd },
);
const member = (values: readonly string[]) =>
  fc.oneof(fc.constantFrom(...values), fc.constantFrom('bad', 'None', null, 1, undefined));

const validIndicator = fc.record({
  type: fc.oneof(fc.stringMatching(/^[a-z0-9_.-]{1,12}$/), fc.constantFrom('a'.repeat(64), '.')),
  value: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('v'.repeat(2000), '')),
  confidence: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 1, -0)),
});
const validAnswer = fc.record(
  {
    is_phishing: fc.boolean(),
    confidence: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 1, -0)),
    indicators: fc.array(validIndicator, { maxLength: 4 }),
    summary: fc.oneof(fc.string({ maxLength: 12 }), fc.constant('s'.repeat(10_000))),
    threat_level: fc.constantFrom(...THREAT_LEVELS),
    recommended_action: fc.constantFrom(...RECOMMENDED_ACTIONS),
    analyzer_details: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue()),
    cached: fc.boolean(),
  },
  { requiredKeys: ['is_phishing', 'confidence', 'indicators'] },
);

/** One change to a valid answer: a top-level key set or deleted, or one of an indicator's. */
type Mutation =
  | { at: 'top'; key: string; del: boolean; value: unknown }
  | { at: 'indicator'; i: number; key: string; del: boolean; value: unknown };
/** For each key, the values worth trying there: valid, boundary and wrong ones. */
const topValues: Record<string, fc.Arbitrary<unknown>> = {
  is_phishing: bool,
  confidence: probability,
  indicators,
  summary: text(10_000),
  threat_level: member(THREAT_LEVELS),
  recommended_action: member(RECOMMENDED_ACTIONS),
  analyzer_details: details,
};
const indicatorValues: Record<string, fc.Arbitrary<unknown>> = {
  type: indicatorType,
  value: text(2000),
  confidence: probability,
  extra: fc.anything(),
};
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  ...Object.entries(topValues).map(([key, values]) =>
    fc.record({
      at: fc.constant('top' as const),
      key: fc.constant(key),
      del: fc.constantFrom(false, false, false, true),
      value: values,
    }),
  ),
  ...Object.entries(indicatorValues).map(([key, values]) =>
    fc.record({
      at: fc.constant('indicator' as const),
      i: fc.nat(3),
      key: fc.constant(key),
      del: fc.constantFrom(false, false, false, true),
      value: values,
    }),
  ),
);

/** A fresh copy of generated data (-0 kept), so mutations never touch fast-check's values. */
function copy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(copy);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = copy(x);
    return out;
  }
  return v;
}

function mutate(base: unknown, muts: Mutation[]): unknown {
  const a = copy(base) as Record<string, unknown>;
  for (const m of muts) {
    const list = a.indicators;
    const target =
      m.at === 'top'
        ? a
        : Array.isArray(list) && list.length > 0
          ? (list[m.i % list.length] as Record<string, unknown>)
          : undefined;
    if (typeof target !== 'object' || target === null) continue;
    if (m.del) delete target[m.key];
    else target[m.key] = m.value;
  }
  return a;
}

const answer = fc.oneof(
  { weight: 3, arbitrary: validAnswer },
  {
    weight: 6,
    arbitrary: fc
      .tuple(validAnswer, fc.array(mutation, { minLength: 1, maxLength: 2 }))
      .map(([base, muts]) => mutate(base, muts)),
  },
  { weight: 1, arbitrary: odd },
);

describe('safeParseAnalyzerAnswer', () => {
  it('accepts, refuses and outputs exactly what AnalyzerAnswer.safeParse does', () => {
    fc.assert(fc.property(answer, sameAsZod), { numRuns: 2000 });
  });

  it('copies the answer: a later change by the analyzer does not reach the parsed one', () => {
    const raw = {
      is_phishing: true,
      confidence: 0.7,
      indicators: [{ type: 'suspicious_url', value: 'http://x.test', confidence: 0.7 }],
      analyzer_details: { symbols: ['A'] },
      cached: true,
    };
    const r = safeParseAnalyzerAnswer(raw);
    expect(r.success).toBe(true);
    if (!r.success) return;
    raw.indicators[0]!.value = 'changed';
    raw.analyzer_details.symbols = [];
    expect(r.data.indicators[0]!.value).toBe('http://x.test');
    expect(r.data.analyzer_details).toEqual({ symbols: ['A'] });
    expect(r.data).not.toHaveProperty('cached');
    expect(r.data.summary).toBe('');
  });
});
