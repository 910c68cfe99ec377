import { createHash } from 'node:crypto';
import { AnalyzerAnswer, type Email } from '@trawl/contracts';
import type { Cache } from '@trawl/platform';

/** JSON with object keys sorted at every level (stable across key order). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) out[k] = (v as Record<string, unknown>)[k];
      return out;
    }
    return v;
  });
}

/** sha256 of the Email without its analysis_context (hex). */
export function emailHash(email: Email): string {
  const { analysis_context: _ctx, ...rest } = email;
  return createHash('sha256').update(canonical(rest)).digest('hex');
}

export function analyzerCacheKey(id: string, version: string, hash: string): string {
  return `acache:${id}:${version}:${hash}`;
}

/**
 * Analyzer result cache: answers are stored under analyzer id + analyzer configuration version +
 * email hash, so an expensive analyzer is not called twice for the same email and configuration.
 * Cache failures never fail a call (they only cost a miss).
 */
export function createAnalyzerCache(cache: Cache) {
  return {
    async get(key: string): Promise<AnalyzerAnswer | undefined> {
      try {
        const raw = await cache.get(key);
        if (raw === null) return undefined;
        const r = AnalyzerAnswer.safeParse(JSON.parse(raw));
        return r.success ? r.data : undefined;
      } catch {
        return undefined;
      }
    },
    async set(key: string, answer: AnalyzerAnswer, ttlSeconds: number): Promise<void> {
      try {
        await cache.set(key, JSON.stringify(answer), ttlSeconds);
      } catch {
        // a miss next time
      }
    },
  };
}
export type AnalyzerCache = ReturnType<typeof createAnalyzerCache>;
