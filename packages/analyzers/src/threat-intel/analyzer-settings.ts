import { z } from 'zod';
import { cacheTtlSeconds, VERDICT_SETTINGS } from '../shared/settings.ts';
import { weightsSchema } from '../shared/symbols.ts';
import { INTEL_SYMBOLS } from './symbols.ts';

/** One number per symbol, defaulting to its declared score (symbols.ts). */
const IntelWeights = weightsSchema(INTEL_SYMBOLS);

export const IntelAnalyzerSettings = z.object({
  ...VERDICT_SETTINGS,
  cache_ttl_seconds: cacheTtlSeconds,
  weights: IntelWeights.default(IntelWeights.parse({})),
});
export type IntelAnalyzerSettings = z.output<typeof IntelAnalyzerSettings>;
