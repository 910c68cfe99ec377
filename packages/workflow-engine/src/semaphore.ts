import type { AbortReason, Scope, ScopeListener } from './scope.ts';

/** One call waiting for a slot. */
class Waiter implements ScopeListener {
  constructor(
    private readonly sem: Semaphore,
    private readonly scope: Scope,
    readonly resolve: (granted: boolean) => void,
  ) {}

  grant(): void {
    this.scope.remove(this);
    this.resolve(true);
  }

  onAbort(_reason: AbortReason): void {
    this.sem.leave(this);
    this.resolve(false);
  }
}

/**
 * Counts analyzer calls in flight across one run (`max_parallel_analyzers`). Waiters are served in
 * arrival order; a waiter whose scope aborts leaves the queue without taking a slot.
 */
export class Semaphore {
  readonly limit: number;
  private used = 0;
  private readonly waiters: Waiter[] = [];

  constructor(limit: number | undefined) {
    this.limit = limit === undefined || limit < 1 ? Number.POSITIVE_INFINITY : limit;
  }

  get inFlight(): number {
    return this.used;
  }

  /** Takes a slot when one is free now (then nobody is waiting); false otherwise. */
  tryAcquire(): boolean {
    if (this.used < this.limit) {
      this.used++;
      return true;
    }
    return false;
  }

  /** Resolves true with a slot taken, or false when `scope` aborted first. */
  acquire(scope: Scope): Promise<boolean> {
    if (scope.aborted) return Promise.resolve(false);
    if (this.tryAcquire()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = new Waiter(this, scope, resolve);
      this.waiters.push(waiter);
      scope.add(waiter);
    });
  }

  /** A waiter whose scope aborted leaves the queue. */
  leave(w: Waiter): void {
    const i = this.waiters.indexOf(w);
    if (i >= 0) this.waiters.splice(i, 1);
  }

  release(): void {
    const next = this.waiters.shift();
    // The slot passes straight to the next waiter, if any.
    if (next) next.grant();
    else this.used--;
  }
}
