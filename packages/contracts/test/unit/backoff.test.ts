import { describe, expect, it } from 'vitest';
import { BackoffState, backoffDelay, retryBackoff } from '../../src/index.ts';

describe('backoffDelay', () => {
  it('grows exponentially and is capped', () => {
    const p = { initialMs: 100, maxMs: 1000 };
    expect([0, 1, 2, 3, 4, 5, 9, 500].map((n) => backoffDelay(n, p))).toEqual([
      0, 100, 200, 400, 800, 1000, 1000, 1000,
    ]);
  });

  it('keeps the delay constant with factor 1', () => {
    expect(backoffDelay(5, { initialMs: 300, maxMs: 1000, factor: 1 })).toBe(300);
  });

  it('draws the jitter share of the delay at random: equal jitter and full jitter', () => {
    const p = { initialMs: 200, maxMs: 10_000 };
    expect(backoffDelay(2, { ...p, jitter: 0.5 }, () => 0)).toBe(200);
    expect(backoffDelay(2, { ...p, jitter: 0.5 }, () => 1)).toBe(400);
    expect(backoffDelay(2, { ...p, jitter: 1 }, () => 0)).toBe(0);
    expect(backoffDelay(2, { ...p, jitter: 1 }, () => 0.25)).toBe(100);
    // out-of-range answers of the random source stay within the bounds
    expect(backoffDelay(2, { ...p, jitter: 1 }, () => 7)).toBe(400);
  });
});

describe('retryBackoff (a workflow analyzer retry_config)', () => {
  const rc = { max_attempts: 5, backoff_ms: 200, max_backoff_ms: 1000, exponential_backoff: true };
  it('doubles per attempt, caps at max_backoff_ms, jitters between half and all', () => {
    expect(backoffDelay(1, retryBackoff(rc), () => 1)).toBe(200);
    expect(backoffDelay(2, retryBackoff(rc), () => 1)).toBe(400);
    expect(backoffDelay(4, retryBackoff(rc), () => 1)).toBe(1000);
    expect(backoffDelay(1, retryBackoff(rc), () => 0)).toBe(100);
    expect(backoffDelay(3, retryBackoff({ ...rc, exponential_backoff: false }), () => 1)).toBe(200);
  });
});

describe('BackoffState', () => {
  it('waits longer after each failure and is ready again after a success', () => {
    const s = new BackoffState({ initialMs: 100, maxMs: 1000 });
    expect(s.ready(0)).toBe(true);
    expect(s.fail(0)).toBe(100);
    expect(s.ready(99)).toBe(false);
    expect(s.ready(100)).toBe(true);
    expect(s.fail(100)).toBe(200);
    s.succeed();
    expect(s.ready(100)).toBe(true);
    expect(s.failures).toBe(0);
  });
});
