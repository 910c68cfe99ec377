import { z } from 'zod';
import { LEXICON_SETTINGS, PROTECTED_SETTINGS, VERDICT_SETTINGS } from '../shared/settings.ts';
import { weightsSchema } from '../shared/symbols.ts';
import { URLS_SYMBOLS } from './symbols.ts';

/** One number per symbol, defaulting to its declared score (symbols.ts). */
const UrlsWeights = weightsSchema(URLS_SYMBOLS);

export const UrlsSettings = z.object({
  ...VERDICT_SETTINGS,
  ...PROTECTED_SETTINGS,
  /** Extra URL shortener domains, added to the lexicon's list. */
  url_shorteners: z.array(z.string()).default([]),
  /** Extra risky TLDs (without the dot), added to the lexicon's list. */
  risky_tlds: z.array(z.string()).default([]),
  ...LEXICON_SETTINGS,
  weights: UrlsWeights.default(UrlsWeights.parse({})),
});
export type UrlsSettings = z.output<typeof UrlsSettings>;
