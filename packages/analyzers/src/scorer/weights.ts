import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { fileStamp } from '../shared/file-stamp.ts';
import { ScorerWeightsInvalidError } from './errors.ts';

const Weight = z.number().min(-20).max(20);

const Group = z
  .object({
    max: z.number().min(0).max(20),
    min: z.number().min(-20).max(0),
    /** See GroupDef.firm; a built-in group keeps its own when the file does not say. */
    firm: z.boolean().optional(),
  })
  .transform((g) => ({ ...g, reason: 'set in the weights file' }));

/**
 * The scorer's weights file (config/defaults/scorer/weights.yaml): the bias, and an operator's
 * overrides of the scores that the symbols declare where they are defined.
 */
export const ScorerWeights = z.object({
  version: z.union([z.string(), z.number()]).optional(),
  /** Log-odds when nothing is found. */
  bias: Weight,
  /**
   * `<analyzer id>.<symbol>` → log-odds, replacing the score the analyzer declared for it (`trawl
   * symbols` lists them). A symbol not listed here counts with its declared score.
   */
  symbols: z.record(z.string(), Weight).default({}),
  /** Group caps (`max`, `min`), replacing the built-in ones of the same name or adding groups. */
  groups: z.record(z.string().regex(/^[a-z0-9_]+$/), Group).default({}),
  /**
   * Indicator type → log-odds, for analyzers that report no symbols (third-party plugins); each
   * distinct type counts once per analyzer.
   */
  types: z.record(z.string(), Weight).default({}),
});
export type ScorerWeights = z.output<typeof ScorerWeights>;

export function parseWeights(text: string, source: string): ScorerWeights {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ScorerWeightsInvalidError(`${source}: not YAML: ${(err as Error).message}`);
  }
  const r = ScorerWeights.safeParse(doc);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new ScorerWeightsInvalidError(
      `${source}: ${first?.path.join('.') || '(root)'}: ${first?.message ?? 'invalid'}`,
    );
  }
  return r.data;
}
interface Loaded {
  weights: ScorerWeights;
  stamp: string;
  checkedAt: number;
  error?: string;
}

const cache = new Map<string, Loaded>();

/**
 * The weights of a file, re-read when its mtime/size changed (checked at most every checkEveryMs).
 * A broken file keeps the last good weights (and says why); a broken first load throws.
 */
export function weightsFor(
  path: string,
  checkEveryMs = 1000,
): { weights: ScorerWeights; error?: string } {
  const now = Date.now();
  const prev = cache.get(path);
  if (prev && now - prev.checkedAt < checkEveryMs) return prev;
  let stamp = '';
  try {
    stamp = fileStamp(path);
  } catch (err) {
    if (prev) return { ...prev, error: `${path}: ${(err as Error).message}` };
    throw new ScorerWeightsInvalidError(`${path}: ${(err as Error).message}`);
  }
  if (prev && prev.stamp === stamp) {
    prev.checkedAt = now;
    return prev;
  }
  try {
    const weights = parseWeights(readFileSync(path, 'utf8'), path);
    const next: Loaded = { weights, stamp, checkedAt: now };
    cache.set(path, next);
    return next;
  } catch (err) {
    if (!prev) throw err;
    const kept: Loaded = { ...prev, stamp, checkedAt: now, error: (err as Error).message };
    cache.set(path, kept);
    return kept;
  }
}
