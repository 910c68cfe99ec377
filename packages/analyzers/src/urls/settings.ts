import { z } from 'zod';
import { DEFAULT_LEXICON_DIR } from '../shared/lexicons.ts';
import { weightsSchema } from '../shared/symbols.ts';
import { URLS_SYMBOLS } from './symbols.ts';

/** One number per symbol, defaulting to its declared score (symbols.ts). */
const UrlsWeights = weightsSchema(URLS_SYMBOLS);

export const UrlsSettings = z.object({
  phishing_score_threshold: z.number().min(0).max(1).default(0.5),
  base_probability: z.number().min(0.001).max(0.999).default(0.1),
  /** Brand ids (brands.yaml) whose look-alikes are flagged; empty: all. */
  protected_brands: z.array(z.string()).default([]),
  organisation_domains: z.array(z.string()).default([]),
  /** Extra URL shortener domains, added to the lexicon's list. */
  url_shorteners: z.array(z.string()).default([]),
  /** Extra risky TLDs (without the dot), added to the lexicon's list. */
  risky_tlds: z.array(z.string()).default([]),
  lexicon_dir: z.string().default(DEFAULT_LEXICON_DIR),
  cache_ttl_seconds: z.number().int().nonnegative().default(0),
  weights: UrlsWeights.default(UrlsWeights.parse({})),
});
export type UrlsSettings = z.output<typeof UrlsSettings>;
