import { type Indicator, StageAggregate } from '@trawl/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AggregateInput, aggregate, probabilityOf, verdictFor } from '../../src/index.ts';
import { answer } from './helpers/fixtures.ts';

const T = { low: 0.3, medium: 0.5, high: 0.7, critical: 0.9 };
const r = (
  isP: boolean,
  c: number,
  weight = 1,
  id?: string,
  extra: Parameters<typeof answer>[2] = {},
): AggregateInput => {
  const out: AggregateInput = { answer: answer(isP, c, extra), weight };
  if (id) out.id = id;
  return out;
};

describe('probabilityOf', () => {
  it('is confidence when phishing, else 1 - confidence', () => {
    expect(probabilityOf({ is_phishing: true, confidence: 0.8 })).toBeCloseTo(0.8);
    expect(probabilityOf({ is_phishing: false, confidence: 0.8 })).toBeCloseTo(0.2);
  });
});

describe('verdictFor', () => {
  it('maps p to threat level and action at the default boundaries', () => {
    expect(verdictFor(0.29, T)).toEqual({ threat_level: 'none', recommended_action: 'allow' });
    expect(verdictFor(0.3, T)).toEqual({ threat_level: 'low', recommended_action: 'flag' });
    expect(verdictFor(0.5, T)).toEqual({ threat_level: 'medium', recommended_action: 'review' });
    expect(verdictFor(0.7, T)).toEqual({ threat_level: 'high', recommended_action: 'quarantine' });
    expect(verdictFor(0.9, T)).toEqual({
      threat_level: 'critical',
      recommended_action: 'quarantine',
    });
  });
  it('uses configured thresholds', () => {
    const t = { low: 0.1, medium: 0.2, high: 0.3, critical: 0.4 };
    expect(verdictFor(0.35, t).threat_level).toBe('high');
  });
});

describe('aggregate', () => {
  it('weighted_average: p = Σ w p / Σ w; is_phishing by threshold; confidence p or 1-p', () => {
    const g = aggregate('weighted_average', [r(true, 0.9, 1), r(false, 0.8, 0.5)], 0.5, T);
    // p = (1*0.9 + 0.5*0.2) / 1.5 = 0.6667
    expect(g.probability).toBeCloseTo(2 / 3);
    expect(g.is_phishing).toBe(true);
    expect(g.confidence).toBeCloseTo(2 / 3);
    expect(g.threat_level).toBe('medium');
    const h = aggregate('weighted_average', [r(true, 0.9, 1), r(false, 0.8, 0.5)], 0.7, T);
    expect(h.is_phishing).toBe(false);
    expect(h.confidence).toBeCloseTo(1 / 3);
  });

  it('weights summing to 0 do not divide by zero: every answer counts 1', () => {
    const g = aggregate('weighted_average', [r(true, 0.9, 0), r(true, 0.5, 0)], 0.5, T);
    expect(g.probability).toBeCloseTo(0.7);
    expect(Number.isNaN(g.confidence)).toBe(false);
  });

  it('weight 0 next to positive weights does not count', () => {
    const g = aggregate('weighted_average', [r(true, 0.9, 1), r(false, 1, 0)], 0.5, T);
    expect(g.probability).toBeCloseTo(0.9);
  });

  it('max_confidence: the most confident answer; tie goes to the higher p', () => {
    const g = aggregate(
      'max_confidence',
      [r(true, 0.6), r(false, 0.95, 1, 'ham'), r(true, 0.7)],
      0.5,
      T,
    );
    expect(g.probability).toBeCloseTo(0.05);
    expect(g.is_phishing).toBe(false);
    expect(g.summary).toMatch(/ham/);
    const t = aggregate('max_confidence', [r(false, 0.8), r(true, 0.8)], 0.5, T);
    expect(t.probability).toBeCloseTo(0.8);
    expect(t.is_phishing).toBe(true);
  });

  it('majority_vote: weighted vote, tie goes to phishing, p = mean p of the winning side', () => {
    const g = aggregate('majority_vote', [r(true, 0.6), r(true, 0.8), r(false, 0.99)], 0.5, T);
    expect(g.probability).toBeCloseTo(0.7);
    expect(g.is_phishing).toBe(true);
    const w = aggregate(
      'majority_vote',
      [r(true, 0.6, 0.2), r(true, 0.8, 0.2), r(false, 0.9, 1)],
      0.5,
      T,
    );
    expect(w.is_phishing).toBe(false);
    expect(w.probability).toBeCloseTo(0.1);
    const tie = aggregate('majority_vote', [r(true, 0.6), r(false, 0.9)], 0.5, T);
    expect(tie.probability).toBeCloseTo(0.6);
    expect(tie.is_phishing).toBe(true);
  });

  it('indicators: union deduplicated by (type, value), keeping the highest confidence', () => {
    const ind = (type: string, value: string, confidence: number) => ({ type, value, confidence });
    const g = aggregate(
      'weighted_average',
      [
        r(true, 0.9, 1, 'a', {
          indicators: [ind('suspicious_url', 'http://x', 0.5), ind('urgency_language', 'now', 0.4)],
        }),
        r(true, 0.8, 1, 'b', {
          indicators: [
            ind('suspicious_url', 'http://x', 0.8),
            ind('suspicious_url', 'http://y', 0.3),
          ],
        }),
      ],
      0.5,
      T,
    );
    expect(g.indicators).toEqual([
      ind('suspicious_url', 'http://x', 0.8),
      ind('urgency_language', 'now', 0.4),
      ind('suspicious_url', 'http://y', 0.3),
    ]);
    expect(g.summary).toMatch(/^Phishing/);
    expect(g.summary).toMatch(/a \(90%\)/);
    expect(g.summary).toMatch(/suspicious_url: http:\/\/x/);
    expect(StageAggregate.safeParse(g).success).toBe(true);
  });

  it('names a clean verdict', () => {
    const g = aggregate('weighted_average', [r(false, 0.9, 1, 'rules')], 0.5, T);
    expect(g.summary).toMatch(/^Not phishing/);
    expect(g.recommended_action).toBe('allow');
  });
});

/** The documented rules written plainly: the optimised aggregate must agree with them exactly. */
function reference(method: 'weighted_average' | 'majority_vote', inputs: AggregateInput[]) {
  const scored = inputs.map((x, i) => ({
    id: x.id ?? `analyzer#${i + 1}`,
    p: probabilityOf(x.answer),
    w: Math.max(x.weight, 0),
    answer: x.answer,
  }));
  const totalW = scored.reduce((s, x) => s + x.w, 0);
  const counted = totalW > 0 ? scored.filter((x) => x.w > 0) : scored.map((x) => ({ ...x, w: 1 }));
  let p: number;
  let pool = counted;
  if (method === 'weighted_average') {
    p = counted.reduce((s, x) => s + x.w * x.p, 0) / counted.reduce((s, x) => s + x.w, 0);
  } else {
    const wp = counted.reduce((s, x) => s + (x.answer.is_phishing ? x.w : 0), 0);
    const wh = counted.reduce((s, x) => s + (x.answer.is_phishing ? 0 : x.w), 0);
    pool = counted.filter((x) => x.answer.is_phishing === wp >= wh);
    p = pool.reduce((s, x) => s + x.p, 0) / pool.length;
  }
  const phishing = p >= 0.5;
  const drivers = [...pool].sort((a, b) =>
    phishing ? b.w * b.p - a.w * a.p : b.w * (1 - b.p) - a.w * (1 - a.p),
  );
  const byKey = new Map<string, Indicator>();
  for (const x of inputs) {
    for (const ind of x.answer.indicators) {
      const key = `${ind.type}\u0000${ind.value}`;
      const prev = byKey.get(key);
      if (prev === undefined || ind.confidence > prev.confidence) byKey.set(key, ind);
    }
  }
  const indicators = [...byKey.values()].sort((a, b) => b.confidence - a.confidence);
  const pc = (x: number) => `${Math.round(x * 100)}%`;
  const threat = verdictFor(p, T).threat_level;
  let summary = `${phishing ? 'Phishing' : 'Not phishing'} (threat ${threat}, phishing probability ${pc(p)}).`;
  summary += ` Driven by ${drivers
    .slice(0, 3)
    .map((d) => `${d.id} (${pc(d.p)})`)
    .join(', ')}.`;
  if (indicators.length > 0) {
    summary += ` Top indicators: ${indicators
      .slice(0, 3)
      .map((i) => `${i.type}: ${i.value.length > 120 ? `${i.value.slice(0, 117)}...` : i.value}`)
      .join('; ')}.`;
  }
  return { probability: p, indicators, summary };
}

describe('aggregate, any input', () => {
  const indicator = fc.record({
    type: fc.constantFrom('suspicious_url', 'rule_match', 'urgency_language'),
    value: fc.oneof(fc.constantFrom('a', 'b', 'http://x.test'), fc.string({ maxLength: 130 })),
    confidence: fc.constantFrom(0, 0.25, 0.5, 0.75, 1),
  });
  const input = fc.record({
    isP: fc.boolean(),
    c: fc.double({ min: 0, max: 1, noNaN: true }),
    w: fc.constantFrom(0, 0.2, 0.5, 1),
    id: fc.constantFrom('a', 'b', 'c', 'd'),
    // up to 6 answers of up to 12 indicators: both sides of the 32-indicator scan limit
    indicators: fc.array(indicator, { maxLength: 12 }),
  });
  it('gives what the documented rules give (probability, indicators, summary)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('weighted_average' as const, 'majority_vote' as const),
        fc.array(input, { minLength: 1, maxLength: 6 }),
        (method, xs) => {
          const inputs = xs.map((x) => r(x.isP, x.c, x.w, x.id, { indicators: x.indicators }));
          const g = aggregate(method, inputs, 0.5, T);
          const want = reference(method, inputs);
          expect(g.probability).toBe(want.probability);
          expect(g.indicators).toEqual(want.indicators);
          expect(g.summary).toBe(want.summary);
        },
      ),
      { numRuns: 500 },
    );
  });
});
