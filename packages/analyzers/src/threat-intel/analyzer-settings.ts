import { z } from 'zod';
import { weightsSchema } from '../shared/symbols.ts';
import { INTEL_SYMBOLS } from './symbols.ts';

/** One number per symbol, defaulting to its declared score (symbols.ts). */
const IntelWeights = weightsSchema(INTEL_SYMBOLS);

export const IntelAnalyzerSettings = z.object({
  phishing_score_threshold: z.number().min(0).max(1).default(0.5),
  base_probability: z.number().min(0.001).max(0.999).default(0.1),
  cache_ttl_seconds: z.number().int().nonnegative().default(0),
  weights: IntelWeights.default(IntelWeights.parse({})),
});
export type IntelAnalyzerSettings = z.output<typeof IntelAnalyzerSettings>;
