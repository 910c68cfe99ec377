import type { Clock } from '../../../src/index.ts';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

const flush = () => new Promise<void>((r) => setImmediate(r));

/** Virtual time: timers fire only when `run` finds nothing else to do, earliest first. */
export class FakeClock implements Clock {
  t = 0;
  private seq = 0;
  private readonly timers = new Map<number, Timer>();

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const seq = ++this.seq;
    this.timers.set(seq, { at: this.t + Math.max(0, ms), seq, fn });
    return seq;
  }

  clearTimeout(h: unknown): void {
    this.timers.delete(h as number);
  }

  get pending(): number {
    return this.timers.size;
  }

  /** Drives `p` to completion on virtual time. */
  async run<T>(p: Promise<T>, maxSteps = 100_000): Promise<T> {
    let settled = false;
    p.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    for (let step = 0; step < maxSteps; step++) {
      await flush();
      if (settled) return p;
      let next: Timer | undefined;
      for (const t of this.timers.values()) {
        if (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq)) next = t;
      }
      if (!next) throw new Error('deadlock: the promise is pending and no timer is set');
      this.timers.delete(next.seq);
      this.t = next.at;
      next.fn();
    }
    throw new Error('too many steps');
  }
}
