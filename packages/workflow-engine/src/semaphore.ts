/**
 * Counts analyzer calls in flight across one run (`max_parallel_analyzers`). Waiters are served in
 * arrival order; a waiter whose signal aborts leaves the queue without taking a slot.
 */
export class Semaphore {
  readonly limit: number;
  private used = 0;
  private readonly waiters: Array<{ grant: () => void }> = [];

  constructor(limit: number | undefined) {
    this.limit = limit === undefined || limit < 1 ? Number.POSITIVE_INFINITY : limit;
  }

  get inFlight(): number {
    return this.used;
  }

  /** Resolves true with a slot taken, or false when `signal` aborted first. */
  acquire(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.used < this.limit) {
      this.used++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(true);
        },
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(false);
      };
      this.waiters.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  release(): void {
    const next = this.waiters.shift();
    // The slot passes straight to the next waiter, if any.
    if (next) next.grant();
    else this.used--;
  }
}
