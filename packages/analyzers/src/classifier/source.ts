import type { ClassifierRepository, ClassifierTotals, TokenCounts } from '@trawl/platform';
import type { MemoryModel } from './model.ts';
import { TOKENIZER } from './tokenize.ts';

/**
 * Where the analyzer reads the learnt state: the store, or a model held in memory (which also
 * answers a token's counts at once, `get`, so nothing needs caching).
 */
export type ModelSource = Pick<ClassifierRepository, 'totals' | 'counts'> & {
  get?: (t: number) => TokenCounts | undefined;
};

/** A read-only source over a model in memory (the eval's folds, a loaded export, tests). */
export function memorySource(m: MemoryModel, tokenizer = TOKENIZER): ModelSource {
  return {
    get: (t) => m.get(t),
    async totals(): Promise<ClassifierTotals> {
      return { version: m.version, tokenizer, phishing: m.phishing, ham: m.ham, updated_at: '' };
    },
    async counts(tokens) {
      const out = new Map<number, TokenCounts>();
      for (const t of tokens) {
        const c = m.get(t);
        if (c) out.set(t, c);
      }
      return out;
    },
  };
}

export interface CachedSource {
  totals(): Promise<ClassifierTotals>;
  /** Counts of the tokens (undefined: never learnt), from memory where it can. */
  lookup(tokens: readonly number[]): Promise<(t: number) => TokenCounts | undefined>;
}

/**
 * The state as the analyzer reads it on the hot path: the totals reused for `ttlMs`, the counts of
 * tokens already looked up kept (up to `maxEntries`, absent ones included) until the version
 * moves on; one query for the tokens of a message not yet known.
 */
export function cachedSource(
  src: ModelSource,
  o: { ttlMs: number; maxEntries: number; now?: () => number },
): CachedSource {
  const now = o.now ?? Date.now;
  let totals: { at: number; value: Promise<ClassifierTotals> } | undefined;
  let version = -1;
  const cache = new Map<number, TokenCounts | null>();
  const readTotals = async () => {
    if (!totals || now() - totals.at >= o.ttlMs) {
      const value = src.totals();
      totals = { at: now(), value };
      value.catch(() => {
        if (totals?.value === value) totals = undefined;
      });
    }
    const t = await totals.value;
    if (t.version !== version) {
      cache.clear();
      version = t.version;
    }
    return t;
  };
  return {
    totals: readTotals,
    async lookup(tokens) {
      if (src.get) return src.get;
      const missing: number[] = [];
      for (const t of tokens) if (!cache.has(t)) missing.push(t);
      const got = missing.length ? await src.counts(missing) : new Map<number, TokenCounts>();
      if (cache.size + missing.length > o.maxEntries) cache.clear();
      if (o.maxEntries > 0) for (const t of missing) cache.set(t, got.get(t) ?? null);
      return (t) => got.get(t) ?? cache.get(t) ?? undefined;
    },
  };
}
