import { z } from 'zod';
import { LEXICON_SETTINGS, PROTECTED_SETTINGS, VERDICT_SETTINGS } from '../shared/settings.ts';
import { weightsSchema } from '../shared/symbols.ts';
import { HEADERS_SYMBOLS } from './symbols.ts';

/** One number per symbol, defaulting to its declared score (headers/symbols.ts). */
const HeadersWeights = weightsSchema(HEADERS_SYMBOLS);

export const HeadersSettings = z.object({
  ...VERDICT_SETTINGS,
  ...PROTECTED_SETTINGS,
  /** Names the organisation is known by (an external display name using one is flagged). */
  organisation_names: z.array(z.string()).default([]),
  /**
   * authserv-ids of the organisation's own receiving hosts whose Authentication-Results count
   * (RFC 8601); empty: the topmost Authentication-Results header's id, the nearest hop.
   */
  authserv_ids: z.array(z.string().min(1).max(255)).max(50).default([]),
  /**
   * ARC sealers (the `d=` of an ARC-Seal) the organisation trusts: its own gateways and the list
   * hosts it relies on. Only their ARC-Authentication-Results explain a broken SPF, DKIM or DMARC;
   * empty (the default): ARC explains nothing, since anyone can seal a message.
   */
  trusted_arc_sealers: z.array(z.string().min(1).max(255)).max(50).default([]),
  ...LEXICON_SETTINGS,
  weights: HeadersWeights.default(HeadersWeights.parse({})),
});
export type HeadersSettings = z.output<typeof HeadersSettings>;
