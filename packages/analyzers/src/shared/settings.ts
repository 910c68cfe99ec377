/**
 * Settings that many analyzers declare alike, one schema each, spread into an analyzer's settings
 * object where it has them (`z.object({ ...VERDICT_SETTINGS, …, ...LEXICON_SETTINGS })`).
 */
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { INSTALL_ROOT } from './install-root.ts';
import { DEFAULT_LEXICON_DIR } from './lexicons.ts';

/** p at or above which the analyzer answers is_phishing. */
export const phishingScoreThreshold = z.number().min(0).max(1).default(0.5);

/** Seconds an answer may be cached (0: not cached). */
export const cacheTtlSeconds = z.number().int().nonnegative().default(0);

/** How a scoring analyzer turns its findings into a verdict. */
export const VERDICT_SETTINGS = {
  phishing_score_threshold: phishingScoreThreshold,
  /** p when nothing suspicious is found. */
  base_probability: z.number().min(0.001).max(0.999).default(0.1),
};

/** Where an analyzer that reads the lexicons finds them, and its answer cache. */
export const LEXICON_SETTINGS = {
  lexicon_dir: z.string().default(DEFAULT_LEXICON_DIR),
  cache_ttl_seconds: cacheTtlSeconds,
};

/** Whose look-alikes and impersonations are flagged. */
export const PROTECTED_SETTINGS = {
  /** Brand ids (brands.yaml) to protect; empty: all. */
  protected_brands: z.array(z.string()).default([]),
  /** The organisation's own registrable domains (look-alikes are flagged). */
  organisation_domains: z.array(z.string()).default([]),
};

/**
 * A file an operator may replace: the one shipped at `config/defaults/<shipped>` unless set; a
 * relative path is read from the installation root.
 */
export function operatorFile(shipped: string) {
  return z
    .string()
    .default(resolve(INSTALL_ROOT, 'config/defaults', shipped))
    .transform((p) => (isAbsolute(p) ? p : resolve(INSTALL_ROOT, p)));
}
