import type { RetryConfig } from './workflow.ts';

/**
 * How long to wait before trying again after consecutive failures: the one backoff of Trawl (the
 * workflow engine's analyzer retries, broker and IMAP reconnects, the Redis retry strategy, webhook
 * deliveries, the settings fetch of a plugin, worker restarts, the mail orchestrator's sources).
 */
export interface BackoffPolicy {
  /** The delay after the first failure (ms). */
  initialMs: number;
  /** Cap of the delay before jitter (ms). */
  maxMs: number;
  /** Growth per consecutive failure (default 2; 1 keeps the delay constant). */
  factor?: number;
  /**
   * 0..1, the share of the delay that is random (default 0): 0.5 is "equal jitter" (between half
   * and all of it), 1 "full jitter" (between 0 and all of it). Retries of many clients then do not
   * arrive in lock-step.
   */
  jitter?: number;
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/**
 * The delay before the next attempt after `failures` consecutive failures (1 for the first):
 * `min(maxMs, initialMs · factor^(failures−1))`, of which the `jitter` share is random. 0 for no
 * failure.
 */
export function backoffDelay(
  failures: number,
  p: BackoffPolicy,
  random: () => number = Math.random,
): number {
  if (failures <= 0) return 0;
  const base = Math.min(p.maxMs, p.initialMs * (p.factor ?? 2) ** Math.min(failures - 1, 40));
  const jitter = clamp01(p.jitter ?? 0);
  if (jitter === 0) return Math.round(base);
  return Math.round(base * (1 - jitter + jitter * clamp01(random())));
}

/** The policy of a workflow analyzer's `retry_config` (equal jitter, as the engine has always had). */
export function retryBackoff(retry: RetryConfig): BackoffPolicy {
  return {
    initialMs: retry.backoff_ms,
    maxMs: retry.max_backoff_ms,
    factor: retry.exponential_backoff ? 2 : 1,
    jitter: 0.5,
  };
}

/** A source's failure count and the time before which it is not tried again. */
export class BackoffState {
  failures = 0;
  nextAttemptAt = 0;
  constructor(private readonly policy: BackoffPolicy) {}

  ready(now: number): boolean {
    return now >= this.nextAttemptAt;
  }

  /** Records a failure; answers the delay before the next attempt. */
  fail(now: number): number {
    this.failures += 1;
    const d = backoffDelay(this.failures, this.policy);
    this.nextAttemptAt = now + d;
    return d;
  }

  succeed(): void {
    this.failures = 0;
    this.nextAttemptAt = 0;
  }
}
