import type { VerdictRequest } from '@trawl/contracts';

/**
 * Where verdicts meet the SMTP sessions waiting for them. A verdict arrives on /internal/verdict
 * (from the mail orchestrator), possibly before the session asked, possibly after it gave up
 * (deadline → 451): it is kept for `ttlMs` so that Postfix's retry of the same message finds it
 * without a second analysis. Ids are the sha256 of the raw message, so every attempt shares one.
 */
export class VerdictBoard {
  private readonly waiters = new Map<string, Set<(v: VerdictRequest) => void>>();
  private readonly recent = new Map<string, { v: VerdictRequest; at: number }>();

  constructor(
    private readonly opts: { maxEntries: number; ttlMs: number; now?: () => number } = {
      maxEntries: 50_000,
      ttlMs: 24 * 3600_000,
    },
  ) {}

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  /** A verdict already known for this id. */
  known(id: string): VerdictRequest | undefined {
    const e = this.recent.get(id);
    if (!e) return undefined;
    if (this.now() - e.at > this.opts.ttlMs) {
      this.recent.delete(id);
      return undefined;
    }
    return e.v;
  }

  /**
   * Waits for the verdict of `id` until `signal` aborts (resolves undefined then). Register before
   * submitting: the verdict may come back before the submission's answer.
   */
  wait(id: string, signal: AbortSignal): Promise<VerdictRequest | undefined> {
    const k = this.known(id);
    if (k) return Promise.resolve(k);
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(undefined);
      let set = this.waiters.get(id);
      if (!set) {
        set = new Set();
        this.waiters.set(id, set);
      }
      const s = set;
      const done = (v: VerdictRequest | undefined) => {
        s.delete(fn);
        if (s.size === 0 && this.waiters.get(id) === s) this.waiters.delete(id);
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      };
      const fn = (v: VerdictRequest) => done(v);
      const onAbort = () => done(undefined);
      s.add(fn);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Records a verdict and wakes its waiters. True when a session was waiting for it. */
  post(full: VerdictRequest): boolean {
    // Only what the policy reads is kept: summaries, indicators and evidence can be large.
    const r = full.result;
    const v: VerdictRequest = {
      id: full.id,
      job_id: full.job_id,
      ...(full.verdict ? { verdict: full.verdict } : {}),
      result: {
        is_phishing: r.is_phishing,
        threat_level: r.threat_level,
        confidence: r.confidence,
        recommended_action: r.recommended_action,
        summary: '',
        indicators: [],
      },
    };
    this.recent.delete(v.id);
    this.recent.set(v.id, { v, at: this.now() });
    while (this.recent.size > this.opts.maxEntries) {
      const oldest = this.recent.keys().next().value;
      if (oldest === undefined) break;
      this.recent.delete(oldest);
    }
    const set = this.waiters.get(v.id);
    if (!set) return false;
    for (const fn of [...set]) fn(v);
    return true;
  }

  get waiting(): number {
    let n = 0;
    for (const s of this.waiters.values()) n += s.size;
    return n;
  }
}
