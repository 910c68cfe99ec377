import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { crossEvaluate, formatCross, looFolds, worstOf } from '../../src/eval/cross.ts';
import { DEFAULT_RESCORE, predicts, rescore } from '../../src/eval/rescore.ts';
import {
  type EvalReport,
  figuresLine,
  formatReport,
  formatSourceTable,
  listCorpus,
  metricsOf,
  type SourcedOutcome,
  sourceNames,
  sourceStats,
} from '../../src/eval/run-eval.ts';

function outcome(
  source: string,
  label: 'phishing' | 'ham',
  index: number,
  syms: [string, number][],
  predicted = false,
): SourcedOutcome {
  return {
    file: `${label}-${index}.eml`,
    label,
    index,
    predicted,
    probability: 0,
    analyzers: {},
    indicatorTypes: [],
    indicators: [],
    symbols: syms.map(([k]) => k),
    scores: Object.fromEntries(syms),
    groups: {},
    source,
  };
}

const table = { bias: -3, overrides: {}, groups: {} };

describe('leave-one-source-out', () => {
  const outs = [
    outcome('a', 'phishing', 0, [['h.x', 4]]),
    outcome('a', 'ham', 0, []),
    outcome('b', 'ham', 0, [['h.x', 4]]),
    outcome('c', 'phishing', 0, []),
    outcome('a', 'phishing', 1, []),
  ];

  it('holds each source out once, in order of first appearance, and trains on the rest', () => {
    const folds = looFolds(outs);
    expect(folds.map((f) => f.heldOut)).toEqual(['a', 'b', 'c']);
    for (const f of folds) {
      expect(f.test.every((x) => x.source === f.heldOut)).toBe(true);
      expect(f.train.some((x) => x.source === f.heldOut)).toBe(false);
      expect(f.test.length + f.train.length).toBe(outs.length);
    }
    expect(folds[0]!.test).toHaveLength(3);
  });

  it('re-scores offline with combine(): declared scores, overrides, bias', () => {
    expect(predicts(outs[0]!, table, DEFAULT_RESCORE)).toBe(true); // -3 + 4
    expect(predicts(outs[0]!, { ...table, overrides: { 'h.x': 2 } }, DEFAULT_RESCORE)).toBe(false);
    expect(predicts({ ...outs[0]!, error: 'boom' }, table, DEFAULT_RESCORE)).toBe(false);
    // exactly at the threshold (3 = −bias) is phishing, whatever the order of the additions
    const edge = outcome('a', 'phishing', 9, [
      ['h.a', 0.45],
      ['h.b', 0.55],
      ['h.c', 0.4],
      ['h.d', 1],
      ['h.e', 0.3],
      ['h.f', 0.3],
    ]);
    expect(predicts(edge, table, DEFAULT_RESCORE)).toBe(true);
    expect(rescore(outs, table, DEFAULT_RESCORE).map((x) => x.predicted)).toEqual([
      true,
      false,
      true,
      false,
      false,
    ]);
  });

  it('takes the worst recall among phishing sources and the worst FPR among ham sources', () => {
    const w = worstOf([
      { source: 'p1', counts: { tp: 9, fn: 1, fp: 0, tn: 0 } },
      { source: 'p2', counts: { tp: 6, fn: 4, fp: 0, tn: 0 } },
      { source: 'h1', counts: { tp: 0, fn: 0, fp: 3, tn: 97 } },
      { source: 'both', counts: { tp: 10, fn: 0, fp: 5, tn: 95 } },
    ]);
    expect(w.recall).toEqual({ source: 'p2', value: 0.6 });
    expect(w.fpr).toEqual({ source: 'both', value: 0.05 });
  });

  it('fits each fold without its source, rows for the fit and the defaults, worst source last', () => {
    // three sources; h.tell marks phishing everywhere, declared too weak to cross the bias alone
    const data: SourcedOutcome[] = [];
    for (let i = 0; i < 30; i++) {
      data.push(outcome('mixed', 'phishing', i, [['h.tell', 2]]));
      data.push(outcome('mixed', 'ham', i, i % 10 === 0 ? [['h.noise', 0.5]] : []));
      data.push(outcome('hamonly', 'ham', i, []));
      data.push(outcome('phishonly', 'phishing', i, [['h.tell', 2]]));
    }
    const r = crossEvaluate(data, {
      defaults: table,
      settings: DEFAULT_RESCORE,
      fit: { l2: 1 },
    });
    expect(r.fitted.map((x) => x.source)).toEqual(['mixed', 'hamonly', 'phishonly']);
    expect(r.fitted[1]!.trainedOn).toEqual(['mixed', 'phishonly']);
    // defaults: h.tell (2) < 3, nothing is phishing; the fit learns it from the other sources
    expect(r.defaults[2]!.counts.tp).toBe(0);
    expect(r.fitted[2]!.counts.tp).toBe(30);
    expect(r.fitted[2]!.fit!.symbols['h.tell']).toBeGreaterThan(2);
    expect(r.worst.defaults.recall?.value).toBe(0);
    expect(r.differ).toBe(0);
    const text = formatCross(r);
    expect(text[0]).toMatch(/^cross-source \(leave-one-source-out\)/);
    expect(text.filter((l) => /^ {2}\S+ +loso-fit /.test(l))).toHaveLength(3);
    expect(text.filter((l) => /^ {2}\S+ +defaults /.test(l))).toHaveLength(3);
    expect(text.at(-2)).toMatch(/^worst source, leave-one-source-out fit: recall 1\.000 \(mixed\)/);
    expect(text.at(-1)).toMatch(/^worst source, shipped defaults: +recall 0\.000 \(mixed\), FPR/);
  });

  it('does not fit a fold whose other sources lack a class', () => {
    const r = crossEvaluate([outcome('p', 'phishing', 0, []), outcome('h', 'ham', 0, [])], {
      defaults: table,
      settings: DEFAULT_RESCORE,
    });
    expect(r.fitted[0]!.skipped).toBe('the other sources have no phishing');
    expect(r.fitted[1]!.skipped).toBe('the other sources have no ham');
    expect(formatCross(r).join('\n')).toContain('not fitted: the other sources have no phishing');
  });
});

describe('per-source report', () => {
  it('prints the metrics that apply to a source: recall with phishing, FPR with ham', () => {
    const lines = formatSourceTable([
      { source: 'corpus', counts: { tp: 8, fn: 2, fp: 1, tn: 9 } },
      { source: 'lists', counts: { tp: 0, fn: 0, fp: 1, tn: 99 } },
      { source: 'nazario', counts: { tp: 3, fn: 1, fp: 0, tn: 0 } },
    ]);
    expect(lines).toEqual([
      '  source   messages  phishing    ham  precision  recall     F1    FPR',
      '  corpus         20        10     10      0.889   0.800  0.842  0.100',
      '  lists         100         0    100          —       —      —  0.010',
      '  nazario         4         4      0          —   0.750      —      —',
    ]);
    const withFilter = formatSourceTable([
      { source: 'x', filter: 'trawl', counts: { tp: 1, fn: 0, fp: 0, tn: 1 } },
      { source: 'x', filter: 'rspamd', counts: { tp: 0, fn: 1, fp: 0, tn: 1 }, note: '1 error' },
    ]);
    expect(withFilter[0]).toMatch(/^ {2}source {2}filter /);
    expect(withFilter[2]).toMatch(/ rspamd .* 1 error$/);
  });

  const report = (sources: string[]): EvalReport => {
    const outcomes = sources.flatMap((s, i) => [
      outcome(s, 'phishing', i, [], true),
      outcome(s, 'ham', i, [], false),
    ]);
    const all = metricsOf({ tp: sources.length, fp: 0, fn: 0, tn: sources.length });
    return {
      workflow: 'default',
      dir: sources.join(', '),
      messages: outcomes.length,
      sources: sourceStats(outcomes),
      parse_failures: [],
      run_failures: [],
      seconds: 1,
      startup_seconds: 0,
      cpu_ms_per_msg: 1,
      msgs_per_s: 400,
      workers: 2,
      all,
      even: all,
      odd: all,
      analyzers: {},
      indicator_types: {},
      outcomes,
    };
  };

  it('keeps the single-source report as it was and ends every report with the figures line', () => {
    const one = formatReport(report(['corpus'])).split('\n');
    expect(one.join('\n')).not.toContain('per source');
    expect(one.at(-1)).toBe('precision=1.000 recall=1.000 F1=1.000 FPR=0.000 msgs/s=400.0');
    const two = formatReport(report(['a', 'b']), ['extra section']).split('\n');
    expect(two).toContain('per source:');
    expect(two.at(-2)).toBe('extra section');
    expect(two.at(-1)).toBe(figuresLine(metricsOf({ tp: 2, fp: 0, fn: 0, tn: 2 }), 400));
  });
});

describe('corpus sources', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-eval-sources-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const make = (path: string, files: string[]) => {
    mkdirSync(join(dir, path), { recursive: true });
    for (const f of files) writeFileSync(join(dir, path, f), 'Subject: x\r\n\r\nx\r\n');
  };
  make('one/phishing', ['b.eml', 'a.eml', 'note.txt']);
  make('one/ham', ['c.eml']);
  make('two/ham', ['d.eml', 'e.eml']);
  make('x/two/phishing', ['f.eml']);

  it('names each directory a source, unique, and lists phishing then ham in name order', () => {
    expect(sourceNames(['/a/corpus', '/b/lists'])).toEqual(['corpus', 'lists']);
    expect(sourceNames(['/a/corpus', '/b/corpus', '/b/corpus'])).toEqual([
      'a/corpus',
      'b/corpus',
      'b/corpus#2',
    ]);
    const items = listCorpus([join(dir, 'one'), join(dir, 'two')]);
    expect(items.map((x) => `${x.source}:${x.label}/${x.file}#${x.index}`)).toEqual([
      'one:phishing/a.eml#0',
      'one:phishing/b.eml#1',
      'one:ham/c.eml#0',
      'two:ham/d.eml#0',
      'two:ham/e.eml#1',
    ]);
    expect(listCorpus([join(dir, 'one')], { limit: 1 })).toHaveLength(2);
  });

  it('with sourceByClass, each class folder is a source', () => {
    const items = listCorpus([join(dir, 'one'), join(dir, 'x/two')], { sourceByClass: true });
    expect([...new Set(items.map((x) => x.source))]).toEqual([
      'one/phishing',
      'one/ham',
      'two/phishing',
    ]);
  });
});
