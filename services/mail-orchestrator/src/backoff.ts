export interface BackoffOptions {
  /** First delay after a failure (ms). */
  initialMs: number;
  /** Cap (ms). */
  maxMs: number;
  /** Growth per consecutive failure. */
  factor?: number;
  /** 0..1: the share of the delay that is random (0 = deterministic). */
  jitter?: number;
}

/** Exponential, capped backoff with optional jitter: delay(n) = min(max, initial * factor^(n-1)). */
export function backoffDelay(failures: number, o: BackoffOptions, random = Math.random): number {
  if (failures <= 0) return 0;
  const factor = o.factor ?? 2;
  const base = Math.min(o.maxMs, o.initialMs * factor ** Math.min(failures - 1, 40));
  const jitter = Math.max(0, Math.min(1, o.jitter ?? 0));
  return Math.round(base * (1 - jitter + jitter * random()));
}

/** Failure count and the time before which a source is not tried again. */
export class BackoffState {
  failures = 0;
  nextAttemptAt = 0;
  constructor(private readonly o: BackoffOptions) {}

  ready(now: number): boolean {
    return now >= this.nextAttemptAt;
  }

  /** Records a failure; answers the delay before the next attempt. */
  fail(now: number): number {
    this.failures += 1;
    const d = backoffDelay(this.failures, this.o);
    this.nextAttemptAt = now + d;
    return d;
  }

  succeed(): void {
    this.failures = 0;
    this.nextAttemptAt = 0;
  }
}
