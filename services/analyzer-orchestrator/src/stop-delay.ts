/**
 * A pause that ends at once when `signal` aborts (the orchestrator's stop), so that no wait before
 * a requeue or a store retry outlives it. A pause of 0 ms or less, or after the abort, resolves now.
 */
export function delayUntilAborted(signal: AbortSignal): (ms: number) => Promise<void> {
  return (ms) =>
    new Promise<void>((resolve) => {
      if (signal.aborted || ms <= 0) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
}
