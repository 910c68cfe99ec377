import { describe, expect, it } from 'vitest';
import type { MessageOutcome } from '../../src/eval/eval-message.ts';
import { fitTable, fitWeights, weightsYaml } from '../../src/eval/fit-weights.ts';
import { DEFAULT_RESCORE, rescore } from '../../src/eval/rescore.ts';
import { combine } from '../../src/scorer/combine.ts';
import { parseWeights } from '../../src/scorer/weights.ts';

type Sym = [key: string, score: number, group?: string];

function outcome(
  label: 'phishing' | 'ham',
  index: number,
  syms: Sym[],
  source = 'a',
): MessageOutcome & { source: string } {
  const scores: Record<string, number> = {};
  const groups: Record<string, string> = {};
  for (const [k, s, g] of syms) {
    scores[k] = s;
    if (g) groups[k] = g;
  }
  return {
    file: `${label}-${index}.eml`,
    label,
    index,
    predicted: false,
    probability: 0,
    analyzers: {},
    indicatorTypes: [],
    indicators: [],
    symbols: syms.map(([k]) => k),
    scores,
    groups,
    source,
  };
}

const STRONG: Sym = ['h.strong', 1];
const WEAK: Sym = ['h.weak', 1];
const BENIGN: Sym = ['h.benign', 0.5];
const RARE: Sym = ['h.rare', 2.5];

/** 80 phishing, 80 ham: h.strong only on phishing, h.benign mostly on ham, h.weak on both. */
function corpus(source = 'a', n = 80): (MessageOutcome & { source: string })[] {
  const outs = [];
  for (let i = 0; i < n; i++) {
    outs.push(outcome('phishing', i, i % 4 === 0 ? [WEAK] : [STRONG, WEAK], source));
    outs.push(outcome('ham', i, i % 5 === 0 ? [WEAK, BENIGN] : [BENIGN], source));
  }
  return outs;
}

describe('fitWeights', () => {
  it('moves scores toward the data: up where a symbol tells phishing, down where it does not', () => {
    const f = fitWeights(corpus(), { l2: 2 });
    expect(f.fitted['h.strong']).toBeGreaterThan(1.5);
    expect(f.fitted['h.benign']).toBeLessThan(0.5);
    expect(f.train.messages).toBe(160);
    // ham with h.weak + h.benign and phishing with h.weak alone look the same once h.benign is 0
    expect(f.train.fp + f.train.fn).toBeLessThanOrEqual(20);
    // every symbol is kept: the ones that moved are overrides, the others keep the declared score
    expect(Object.keys(f.fitted).sort()).toEqual(['h.benign', 'h.strong', 'h.weak']);
  });

  it('keeps a symbol absent from training at its declared score, never 0', () => {
    const f = fitWeights(corpus());
    expect(f.fitted['h.rare']).toBeUndefined();
    expect(f.symbols['h.rare']).toBeUndefined();
    const test = outcome('phishing', 999, [RARE, STRONG]);
    const c = combine(
      test.symbols.map((key) => ({ key, score: test.scores[key] })),
      fitTable(f),
    );
    expect(c.contributions.find((x) => x.symbol === 'h.rare')?.weight).toBe(2.5);
  });

  it('pulls the bias toward the weights file’s too: it moves with the data only as far as λ lets it', () => {
    // every message carries only h.weak: the data asks for the bias that makes p = 0.5 (bias = -1)
    const flat: (MessageOutcome & { source: string })[] = [];
    for (let i = 0; i < 100; i++) {
      flat.push(outcome('phishing', i, [WEAK]));
      flat.push(outcome('ham', i, [WEAK]));
    }
    const loose = fitWeights(flat, { l2: 0.1, bias: -3, iterations: 600 });
    const tight = fitWeights(flat, { l2: 5000, bias: -3, iterations: 600 });
    expect(loose.bias).toBeGreaterThan(-2.5);
    expect(tight.bias).toBeLessThan(-2.9);
    expect(fitWeights(flat, { l2: 0.1, bias: -3, fixedBias: true }).bias).toBe(-3);
  });

  it('pulls toward the declared score: a stronger λ stays closer to it', () => {
    const loose = fitWeights(corpus(), { l2: 0.5 });
    const tight = fitWeights(corpus(), { l2: 500 });
    const d = (f: ReturnType<typeof fitWeights>) => Math.abs(f.fitted['h.strong']! - 1);
    expect(d(tight)).toBeLessThan(d(loose));
    expect(d(tight)).toBeLessThan(0.15);
    // a symbol that fired on two messages barely moves from its declared score
    const outs = [...corpus(), outcome('ham', 500, [RARE]), outcome('ham', 501, [RARE])];
    expect(fitWeights(outs).fitted['h.rare']).toBeGreaterThan(1.5);
  });

  it('keeps the sign of the declared score unless allowNegative', () => {
    expect(fitWeights(corpus(), { l2: 0.1 }).fitted['h.benign']).toBe(0);
    expect(fitWeights(corpus(), { l2: 0.1, allowNegative: true }).fitted['h.benign']).toBeLessThan(
      0,
    );
    // a legitimate-mail symbol (negative prior) is never fitted above 0
    const outs = corpus();
    for (let i = 0; i < 40; i++) outs.push(outcome('phishing', 100 + i, [['h.list', -1], STRONG]));
    outs.push(outcome('ham', 300, [['h.list', -1]]));
    expect(fitWeights(outs, { l2: 0.1 }).fitted['h.list']).toBeLessThanOrEqual(0);
  });

  it('respects group caps as combine() does: capped symbols gain nothing past the cap', () => {
    // two symbols of one group capped at 2 fire together on every phishing message
    const G: Sym[] = [
      ['h.g1', 1.5, 'pressure'],
      ['h.g2', 1.5, 'pressure'],
    ];
    const outs = [];
    for (let i = 0; i < 60; i++) {
      outs.push(outcome('phishing', i, G));
      outs.push(outcome('ham', i, i % 10 === 0 ? [G[0]!] : []));
    }
    const groups = { pressure: { max: 2, min: 0, reason: 'test' } };
    const f = fitWeights(outs, { l2: 1, groups });
    // the phishing messages push the pair up only until their sum reaches the cap; the ham pushes
    // h.g1 down, and h.g2 takes up what h.g1 gave
    expect(f.fitted['h.g1']!).toBeLessThan(1.5);
    expect(f.fitted['h.g1']! + f.fitted['h.g2']!).toBeLessThanOrEqual(2 + 0.1 + 1e-9);
    // without the cap (a group nobody defined) the same data pushes them far past it
    const uncapped = fitWeights(
      outs.map((o) => ({ ...o, groups: {} })),
      { l2: 1 },
    );
    expect(uncapped.fitted['h.g1']! + uncapped.fitted['h.g2']!).toBeGreaterThan(3);
    const c = combine(
      G.map(([key, score, group]) => ({ key, score, group })),
      fitTable(f),
    );
    expect(c.groups.pressure!.counted).toBeLessThanOrEqual(2);
    expect(f.groups).toEqual(groups);
  });

  it('weighs each source the same whatever its size', () => {
    // source big: h.x tells phishing; source small (10x smaller): h.x tells ham
    const X: Sym = ['h.x', 1];
    const outs = [];
    for (let i = 0; i < 200; i++) {
      outs.push(outcome('phishing', i, [X], 'big'));
      outs.push(outcome('ham', i, [], 'big'));
    }
    for (let i = 0; i < 20; i++) {
      outs.push(outcome('phishing', i, [], 'small'));
      outs.push(outcome('ham', i, [X], 'small'));
    }
    const balanced = fitWeights(outs, { l2: 1 });
    const pooled = fitWeights(outs, { l2: 1, sourceOf: () => 'one' });
    // pooled, the big source decides; balanced, the two sources cancel out
    expect(pooled.fitted['h.x']!).toBeGreaterThan(2);
    expect(balanced.fitted['h.x']!).toBeLessThan(pooled.fitted['h.x']! - 1);
  });

  it('trains on the given subset only (the even/odd split)', () => {
    const f = fitWeights(corpus(), { train: (o) => o.index % 2 === 0 });
    expect(f.train.messages).toBe(80);
  });

  it('writes a weights file of the scorer schema with only the moved symbols', () => {
    const f = fitWeights(corpus(), { l2: 2 });
    const text = weightsYaml(f, 'the tool an operator runs\non their own labelled mail');
    expect(text).toMatch(/^# the tool an operator runs\n# on their own labelled mail\n/);
    const w = parseWeights(text, 'fit');
    expect(w.bias).toBe(f.bias);
    expect(w.symbols).toEqual(f.symbols);
    expect(w.groups).toEqual({});
    expect(w.types).toEqual({});
    for (const [k, v] of Object.entries(w.symbols))
      expect(Math.abs(v - f.stats[k]!.declared!)).toBeGreaterThanOrEqual(0.1 - 1e-9);
    expect(text).toMatch(/h\.strong: [\d.]+ # declared 1; fired on 60 phishing \/ 0 ham/);
    // the fitted table, re-scored offline, gives the training counts it reports
    const re = rescore(corpus(), fitTable(f), DEFAULT_RESCORE);
    expect(re.filter((x) => x.label === 'phishing' && x.predicted).length).toBe(f.train.tp);
  });
});
