import { z } from 'zod';
import { DEFAULT_LEXICON_DIR } from '../shared/lexicons.ts';
import { CATEGORY_PER_HIT, CONTENT_SYMBOLS } from './symbols.ts';

/** Log-odds per distinct phrase of a category, and the cap on phrases counted. */
const CategoryWeight = z.object({ per_hit: z.number(), max_hits: z.number().int().positive() });

const ContentWeights = z.object({
  urgency: CategoryWeight.default({ per_hit: CATEGORY_PER_HIT.urgency, max_hits: 3 }),
  threat: CategoryWeight.default({ per_hit: CATEGORY_PER_HIT.threat, max_hits: 3 }),
  reward: CategoryWeight.default({ per_hit: CATEGORY_PER_HIT.reward, max_hits: 3 }),
  credential: CategoryWeight.default({ per_hit: CATEGORY_PER_HIT.credential, max_hits: 3 }),
  payment: CategoryWeight.default({ per_hit: CATEGORY_PER_HIT.payment, max_hits: 3 }),
  spam: CategoryWeight.default({ per_hit: CATEGORY_PER_HIT.spam, max_hits: 3 }),
  /** Phrases found in the subject count this many times. */
  subject_factor: z.number().default(2),
  negative_sentiment: z.number().default(CONTENT_SYMBOLS.negative_sentiment.score),
  brand_impersonation: z.number().default(CONTENT_SYMBOLS.brand_impersonation.score),
  brand_mention: z.number().default(CONTENT_SYMBOLS.brand_mention.score),
  brand_sender_offsite_links: z.number().default(CONTENT_SYMBOLS.brand_sender_offsite_links.score),
  text_obfuscation: z.number().default(CONTENT_SYMBOLS.text_obfuscation.score),
  image_only: z.number().default(CONTENT_SYMBOLS.image_only.score),
  html_only: z.number().default(CONTENT_SYMBOLS.html_only.score),
  combo_bonus: z.number().default(CONTENT_SYMBOLS.combo_bonus.score),
  subject_money: z.number().default(CONTENT_SYMBOLS.subject_money.score),
  hidden_text: z.number().default(CONTENT_SYMBOLS.hidden_text.score),
  inserted_noise: z.number().default(CONTENT_SYMBOLS.inserted_noise.score),
  greeting_address: z.number().default(CONTENT_SYMBOLS.greeting_address.score),
  brand_links_explain_request: z
    .number()
    .default(CONTENT_SYMBOLS.brand_links_explain_request.score),
  brand_links_explain_alert: z.number().default(CONTENT_SYMBOLS.brand_links_explain_alert.score),
  generic_greeting: z.number().default(CONTENT_SYMBOLS.generic_greeting.score),
});

export const ContentSettings = z.object({
  phishing_score_threshold: z.number().min(0).max(1).default(0.5),
  base_probability: z.number().min(0.001).max(0.999).default(0.1),
  /** negative_sentiment fires when the sentiment score (−1 … 1) is at or below −sentiment_threshold. */
  sentiment_threshold: z.number().min(0).max(1).default(0.5),
  /** Minimum confidence of a brand mention (0.5 body once, 0.7 body several times, 0.9 subject or display name) to be used. */
  ner_confidence_threshold: z.number().min(0).max(1).default(0.7),
  protected_brands: z.array(z.string()).default([]),
  /** Language lexicons used; empty: every lexicon in lexicon_dir. English always applies. */
  languages: z.array(z.string()).default([]),
  lexicon_dir: z.string().default(DEFAULT_LEXICON_DIR),
  cache_ttl_seconds: z.number().int().nonnegative().default(0),
  weights: ContentWeights.default(ContentWeights.parse({})),
});
export type ContentSettings = z.output<typeof ContentSettings>;
