import type { AbortReason, Scope, ScopeListener } from './scope.ts';

/** Time source and timers, injected so tests can run on virtual time. */
export interface Clock {
  /** Milliseconds from an arbitrary origin; only differences are used. */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The clock of the system (performance.now, timers). */
export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

class Sleeper implements ScopeListener {
  handle: unknown = undefined;
  constructor(
    private readonly clock: Clock,
    private readonly scope: Scope,
    private readonly resolve: (slept: boolean) => void,
  ) {}

  wake(): void {
    this.scope.remove(this);
    this.resolve(true);
  }

  onAbort(_reason: AbortReason): void {
    this.clock.clearTimeout(this.handle);
    this.resolve(false);
  }
}

/** Resolves true after `ms`, or false as soon as `scope` aborts. */
export function sleep(clock: Clock, ms: number, scope: Scope): Promise<boolean> {
  if (scope.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const s = new Sleeper(clock, scope, resolve);
    s.handle = clock.setTimeout(() => s.wake(), ms);
    scope.add(s);
  });
}
