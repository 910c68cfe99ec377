import { z } from 'zod';
import { DEFAULT_LEXICON_DIR } from '../shared/lexicons.ts';
import { weightsSchema } from '../shared/symbols.ts';
import { HEADERS_SYMBOLS } from './symbols.ts';

/** One number per symbol, defaulting to its declared score (headers/symbols.ts). */
const HeadersWeights = weightsSchema(HEADERS_SYMBOLS);

export const HeadersSettings = z.object({
  /** p at or above which the analyzer answers is_phishing. */
  phishing_score_threshold: z.number().min(0).max(1).default(0.5),
  /** p when nothing suspicious is found. */
  base_probability: z.number().min(0.001).max(0.999).default(0.1),
  /** Brand ids (brands.yaml) to protect; empty: all. */
  protected_brands: z.array(z.string()).default([]),
  /** The organisation's own registrable domains (look-alikes are flagged). */
  organisation_domains: z.array(z.string()).default([]),
  /** Names the organisation is known by (an external display name using one is flagged). */
  organisation_names: z.array(z.string()).default([]),
  /**
   * authserv-ids of the organisation's own receiving hosts whose Authentication-Results count
   * (RFC 8601); empty: the topmost Authentication-Results header's id, the nearest hop.
   */
  authserv_ids: z.array(z.string().min(1).max(255)).max(50).default([]),
  lexicon_dir: z.string().default(DEFAULT_LEXICON_DIR),
  cache_ttl_seconds: z.number().int().nonnegative().default(0),
  weights: HeadersWeights.default(HeadersWeights.parse({})),
});
export type HeadersSettings = z.output<typeof HeadersSettings>;
