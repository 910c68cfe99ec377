import { z } from 'zod';
import { phishingScoreThreshold } from '../shared/settings.ts';
import { weightsSchema } from '../shared/symbols.ts';
import { LIST_SYMBOLS } from './symbols.ts';

const ListsWeights = weightsSchema(LIST_SYMBOLS);

export const ListsSettings = z.object({
  /**
   * The authserv-ids whose Authentication-Results count (as the headers analyzer's setting of
   * that name): an allow of a sender counts only when its domain passed DMARC or an aligned DKIM
   * there. Empty: the topmost header's, when its host wrote the topmost Received header.
   */
  authserv_ids: z.array(z.string().min(1).max(253)).max(50).default([]),
  /**
   * Seconds the lists are kept in memory at most; they are read again at once when a
   * `lists.changed` event says they changed, so this only bounds a missed event.
   */
  max_age_seconds: z.number().int().min(1).max(86_400).default(300),
  phishing_score_threshold: phishingScoreThreshold,
  weights: ListsWeights.default(ListsWeights.parse({})),
});
export type ListsSettings = z.output<typeof ListsSettings>;
