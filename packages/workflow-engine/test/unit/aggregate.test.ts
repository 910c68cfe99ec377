import { StageAggregate } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import {
  type AggregateInput,
  aggregate,
  backoffDelay,
  probabilityOf,
  verdictFor,
} from '../../src/index.ts';
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

describe('backoffDelay', () => {
  const rc = { max_attempts: 5, backoff_ms: 200, max_backoff_ms: 1000, exponential_backoff: true };
  it('doubles per attempt, caps at max_backoff_ms, jitters between half and all', () => {
    expect(backoffDelay(rc, 1, () => 1)).toBe(200);
    expect(backoffDelay(rc, 2, () => 1)).toBe(400);
    expect(backoffDelay(rc, 4, () => 1)).toBe(1000);
    expect(backoffDelay(rc, 1, () => 0)).toBe(100);
    expect(backoffDelay({ ...rc, exponential_backoff: false }, 3, () => 1)).toBe(200);
  });
});
