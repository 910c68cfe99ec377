import { z } from 'zod';
import { phishingScoreThreshold } from '../shared/settings.ts';
import { weightsSchema } from '../shared/symbols.ts';
import { CLASSIFIER_SYMBOLS } from './symbols.ts';

/** The most each symbol adds (its declared score by default). */
const ClassifierWeights = weightsSchema(CLASSIFIER_SYMBOLS);

export const ClassifierSettings = z.object({
  /** Abstains until it has learnt at least this many phishing messages… */
  min_phishing_messages: z.number().int().min(1).default(200),
  /** …and this many legitimate ones. */
  min_ham_messages: z.number().int().min(1).default(200),
  /** p at or above which it reports `bayes_phish`. */
  phishing_probability: z.number().min(0.5).max(1).default(0.9),
  /** p at or below which it reports `bayes_ham`. */
  ham_probability: z.number().min(0).max(0.5).default(0.1),
  /** Fewer telling tokens than this: no opinion. */
  min_tokens: z.number().int().min(1).default(10),
  /** How long the learnt totals are reused before the store is asked again. */
  cache_ttl_ms: z.number().int().nonnegative().default(10_000),
  /** Token counts kept in memory between messages (dropped when the state changes). */
  token_cache_entries: z.number().int().nonnegative().default(200_000),
  phishing_score_threshold: phishingScoreThreshold,
  weights: ClassifierWeights.default(ClassifierWeights.parse({})),
});
export type ClassifierSettings = z.output<typeof ClassifierSettings>;
