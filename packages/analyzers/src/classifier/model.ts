import type { TokenCounts } from '@trawl/platform';

/** Which class a message is learnt as. */
export type LearnLabel = 'phishing' | 'legitimate';

/** Messages learnt per class. */
export interface ClassTotals {
  phishing: number;
  ham: number;
}

/** What the classifier says of a message's tokens. */
export interface Classification {
  /** Robinson–Fisher combined probability that it is phishing (0.5: no opinion). */
  probability: number;
  /** Tokens that counted (known and far enough from 0.5). */
  used: number;
}

/** Robinson's strength of the prior (s) and its value (x), as SpamAssassin and SpamBayes use. */
const S = 1;
const X = 0.5;
/** Tokens nearer 0.5 than this say nothing and are left out. */
const MIN_DEV = 0.1;
/** At most this many of the most telling tokens are combined (SpamAssassin: 150). */
const MAX_TOKENS = 150;

/** Robinson's f(w): the token's phishing probability, pulled toward 0.5 when seen rarely. */
function tokenProbability(c: TokenCounts, t: ClassTotals): number {
  const [p, h] = c;
  const n = p + h;
  if (n === 0 || t.phishing === 0 || t.ham === 0) return X;
  const pp = p / t.phishing;
  const ph = h / t.ham;
  const prob = pp + ph === 0 ? X : pp / (pp + ph);
  return (S * X + n * prob) / (S + n);
}

/** Upper tail of the chi-square distribution with an even number of degrees of freedom. */
function chi2Q(x2: number, v: number): number {
  const m = x2 / 2;
  let term = Math.exp(-m);
  let sum = term;
  for (let i = 1; i < v / 2; i++) {
    term *= m / i;
    sum += term;
  }
  return Math.min(sum, 1);
}

/**
 * Fisher's chi-square combining of the tokens' probabilities (SpamBayes, SpamAssassin, Rspamd): the
 * most telling `MAX_TOKENS` tokens, S = evidence of phishing, H = of legitimate mail,
 * p = (1 + S − H) / 2.
 */
export function classify(
  tokens: readonly number[],
  counts: (t: number) => TokenCounts | undefined,
  totals: ClassTotals,
): Classification {
  const fs: number[] = [];
  for (const t of tokens) {
    const c = counts(t);
    if (!c) continue;
    const f = tokenProbability(c, totals);
    if (Math.abs(f - 0.5) >= MIN_DEV) fs.push(f);
  }
  if (fs.length === 0) return { probability: 0.5, used: 0 };
  if (fs.length > MAX_TOKENS) {
    fs.sort((a, b) => Math.abs(b - 0.5) - Math.abs(a - 0.5));
    fs.length = MAX_TOKENS;
  }
  let lnP = 0;
  let lnH = 0;
  for (const f of fs) {
    const q = Math.min(Math.max(f, 1e-6), 1 - 1e-6);
    lnP += Math.log(q);
    lnH += Math.log(1 - q);
  }
  const n = fs.length;
  const phish = 1 - chi2Q(-2 * lnH, 2 * n);
  const ham = 1 - chi2Q(-2 * lnP, 2 * n);
  return { probability: (1 + phish - ham) / 2, used: n };
}

/**
 * A classifier state held in memory: the same counts the store keeps, for the eval's folds, tests,
 * and as the read-only model an exported file loads into. Token → slot in a Map of small integers,
 * counts in typed arrays: a million tokens are two flat arrays to the garbage collector, not a
 * million objects (it marks them at every full collection of an eval worker or a service).
 */
export class MemoryModel {
  private readonly slots = new Map<number, number>();
  private p = new Int32Array(1024);
  private h = new Int32Array(1024);
  private used = 0;
  phishing = 0;
  ham = 0;
  version = 0;

  get size(): number {
    return this.slots.size;
  }

  /** Counts of a token; undefined when no learnt message holds it. */
  get(t: number): TokenCounts | undefined {
    const i = this.slots.get(t);
    return i === undefined ? undefined : [this.p[i]!, this.h[i]!];
  }

  /** Sets a token's counts (loading a state); 0/0 removes it. */
  set(t: number, phishing: number, ham: number): void {
    let i = this.slots.get(t);
    if (phishing <= 0 && ham <= 0) {
      if (i !== undefined) this.slots.delete(t);
      return;
    }
    if (i === undefined) {
      if (this.used === this.p.length) {
        const grow = (a: Int32Array) => {
          const b = new Int32Array(a.length * 2);
          b.set(a);
          return b;
        };
        this.p = grow(this.p);
        this.h = grow(this.h);
      }
      i = this.used++;
      this.slots.set(t, i);
    }
    this.p[i] = Math.max(0, phishing);
    this.h[i] = Math.max(0, ham);
  }

  /** Every token with its counts, in insertion order. */
  *entries(): IterableIterator<[token: number, phishing: number, ham: number]> {
    for (const [t, i] of this.slots) yield [t, this.p[i]!, this.h[i]!];
  }

  /** Learns (`sign` 1) or unlearns (`sign` −1) one message's distinct tokens. */
  train(tokens: readonly number[], label: LearnLabel, sign: 1 | -1 = 1): void {
    const phishing = label === 'phishing';
    for (const t of tokens) {
      const c = this.get(t);
      if (!c && sign < 0) continue;
      const [p, h] = c ?? [0, 0];
      this.set(t, phishing ? p + sign : p, phishing ? h : h + sign);
    }
    if (phishing) this.phishing = Math.max(0, this.phishing + sign);
    else this.ham = Math.max(0, this.ham + sign);
    this.version++;
  }

  classify(tokens: readonly number[]): Classification {
    return classify(tokens, (t) => this.get(t), this);
  }
}
