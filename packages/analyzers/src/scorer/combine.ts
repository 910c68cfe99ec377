import { GROUPS, type GroupDef } from '../shared/symbols.ts';

/** One symbol an analyzer reported, with the score it declared and its group. */
export interface Evidence {
  /** `<analyzer id>.<symbol>` */
  key: string;
  /** Declared score (log-odds) the analyzer reported for it; undefined when it reported none. */
  score: number | undefined;
  group?: string | undefined;
}

/** What the scorer adds: declared scores, an operator's overrides, group caps. */
export interface ScoreTable {
  bias: number;
  /** `<analyzer>.<symbol>` → log-odds, replacing the declared score. */
  overrides: Readonly<Record<string, number>>;
  /** Group caps, replacing or adding to the built-in GROUPS. */
  groups: Readonly<Record<string, GroupDef>>;
}

/** One piece of evidence the scorer counted. */
export interface Contribution {
  symbol: string;
  weight: number;
  group?: string;
}

export interface GroupTally {
  /** Σ of its symbols' weights. */
  sum: number;
  /** What the group added after its cap. */
  counted: number;
  /** The group counted nothing because this group, which it yields to, counted (`yields_to`). */
  yielded_to?: string;
}

export interface Combined {
  /** bias + Σ ungrouped weights + Σ capped group sums (not yet bounded by max_log_odds). */
  logOdds: number;
  contributions: Contribution[];
  groups: Record<string, GroupTally>;
}

/** The cap of a group, from the table, else the built-in GROUPS; undefined for an unknown group. */
export function groupCap(t: ScoreTable, g: string): GroupDef | undefined {
  const builtin = (GROUPS as Record<string, GroupDef>)[g];
  const set = t.groups[g];
  if (!set) return builtin;
  // a cap set in the weights file keeps the group's built-in `yields_to`, and `firm` unless it
  // says otherwise
  return {
    ...set,
    ...(builtin?.yields_to ? { yields_to: builtin.yields_to } : {}),
    ...(set.firm === undefined && builtin?.firm ? { firm: true } : {}),
  };
}

/**
 * Combines evidence in log-odds space, as Rspamd's symbol groups do: each symbol counts once with
 * its override or its declared score; the symbols of a group add up and the group adds at most its
 * `max` (at least its `min`); symbols without a known group add as they are. A firm group's positive
 * sum is never lowered by negative evidence of other groups: when one is present, the rest adds at
 * least 0.
 */
export function combine(evidence: Iterable<Evidence>, t: ScoreTable): Combined {
  const seen = new Set<string>();
  const contributions: Contribution[] = [];
  const groups: Record<string, GroupTally> = {};
  let sum = 0;
  for (const e of evidence) {
    if (seen.has(e.key)) continue;
    seen.add(e.key);
    const w = t.overrides[e.key] ?? e.score;
    if (w === undefined || w === 0) continue;
    const cap = e.group ? groupCap(t, e.group) : undefined;
    if (cap && e.group) {
      const g = groups[e.group] ?? { sum: 0, counted: 0 };
      groups[e.group] = g;
      g.sum += w;
      contributions.push({ symbol: e.key, weight: w, group: e.group });
    } else {
      sum += w;
      contributions.push({ symbol: e.key, weight: w });
    }
  }
  for (const [name, g] of Object.entries(groups)) {
    const cap = groupCap(t, name)!;
    g.counted = Math.min(cap.max, Math.max(cap.min, g.sum));
  }
  // a group that yields to another counts nothing when that one counted (after every cap)
  for (const [name, g] of Object.entries(groups)) {
    const over = groupCap(t, name)?.yields_to?.find((y) => (groups[y]?.counted ?? 0) !== 0);
    if (over !== undefined) {
      g.counted = 0;
      g.yielded_to = over;
    }
  }
  // what firm groups add stands whatever the evidence of legitimate mail elsewhere says
  let firm = 0;
  for (const [name, g] of Object.entries(groups)) {
    if (groupCap(t, name)?.firm && g.counted > 0) firm += g.counted;
    else sum += g.counted;
  }
  return { logOdds: t.bias + firm + (firm > 0 ? Math.max(sum, 0) : sum), contributions, groups };
}
