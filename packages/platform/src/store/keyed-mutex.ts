/** Serialises async work per key inside one process. */
export class KeyedMutex {
  private readonly tails = new Map<string | number, Promise<unknown>>();

  async run<T>(key: string | number, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await next;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
