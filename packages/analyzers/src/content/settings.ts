import { z } from 'zod';
import { LEXICON_SETTINGS, VERDICT_SETTINGS } from '../shared/settings.ts';
import { weightsShape } from '../shared/symbols.ts';
import { CATEGORY_PER_HIT, CONTENT_TECHNIQUE_SYMBOLS } from './symbols.ts';

/** Log-odds per distinct phrase of a category, and the cap on phrases counted. */
const CategoryWeight = z.object({ per_hit: z.number(), max_hits: z.number().int().positive() });

type Category = keyof typeof CATEGORY_PER_HIT;

/** Each language category's weight: its declared per-hit score, three phrases at most. */
function categoryWeights() {
  const shape = {} as Record<Category, z.ZodDefault<typeof CategoryWeight>>;
  for (const cat of Object.keys(CATEGORY_PER_HIT) as Category[])
    shape[cat] = CategoryWeight.default({ per_hit: CATEGORY_PER_HIT[cat], max_hits: 3 });
  return shape;
}

const ContentWeights = z.object({
  ...categoryWeights(),
  /** Phrases found in the subject count this many times. */
  subject_factor: z.number().default(2),
  ...weightsShape(CONTENT_TECHNIQUE_SYMBOLS, false),
});

export const ContentSettings = z.object({
  ...VERDICT_SETTINGS,
  /** negative_sentiment fires when the sentiment score (−1 … 1) is at or below −sentiment_threshold. */
  sentiment_threshold: z.number().min(0).max(1).default(0.5),
  /** Minimum confidence of a brand mention (0.5 body once, 0.7 body several times, 0.9 subject or display name) to be used. */
  ner_confidence_threshold: z.number().min(0).max(1).default(0.7),
  protected_brands: z.array(z.string()).default([]),
  /** Language lexicons used; empty: every lexicon in lexicon_dir. English always applies. */
  languages: z.array(z.string()).default([]),
  ...LEXICON_SETTINGS,
  weights: ContentWeights.default(ContentWeights.parse({})),
});
export type ContentSettings = z.output<typeof ContentSettings>;
