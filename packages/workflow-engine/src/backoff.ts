import type { RetryConfig } from '@trawl/contracts';

/**
 * Delay before the next attempt after attempt `failedAttempt` (1-based) failed: `backoff_ms`,
 * doubled per attempt when `exponential_backoff`, capped at `max_backoff_ms`, then "equal jitter"
 * (uniformly between half and all of it) so retries of many jobs do not arrive in lock-step.
 */
export function backoffDelay(
  retry: RetryConfig,
  failedAttempt: number,
  random: () => number,
): number {
  const base = retry.exponential_backoff
    ? retry.backoff_ms * 2 ** Math.max(0, failedAttempt - 1)
    : retry.backoff_ms;
  const capped = Math.min(base, retry.max_backoff_ms);
  const r = Math.min(1, Math.max(0, random()));
  return Math.round(capped / 2 + (r * capped) / 2);
}
