import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnalyzerResult } from '@trawl/contracts';
import { afterAll, describe, expect, it } from 'vitest';
import type { MessageOutcome } from '../../src/eval/eval-message.ts';
import { fitWeights, weightsYaml } from '../../src/eval/fit-weights.ts';
import {
  analyzeScore,
  ensembleScore,
  parseWeights,
  ScorerSettings,
  weightsFor,
} from '../../src/scorer/index.ts';
import { makeEmail } from '../fixtures/emails.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-scorer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function result(
  id: string,
  symbols: string[] | undefined,
  indicators: { type: string; value: string; confidence: number }[] = [],
): AnalyzerResult {
  return {
    analyzer_id: id,
    status: 'success',
    is_phishing: false,
    confidence: 0.9,
    threat_level: 'none',
    indicators,
    analyzer_details: symbols ? { symbols } : {},
    attempts: 1,
    duration_ms: 1,
  };
}

const weights = parseWeights(
  'bias: -3\nsymbols:\n  headers.spf_fail: 2\n  content.urgency_1: 0.5\n  urls.ip_url: 4\ntypes:\n  credential_form: 2.5\n',
  'test',
);

describe('scorer', () => {
  it('sums the weights of reported symbols once each, in log-odds', () => {
    const ctx = {
      offline: {
        providers: {},
        analyzers: {
          headers: result('headers', ['spf_fail', 'spf_fail']),
          content: result('content', ['urgency_1', 'unknown_symbol']),
        },
      },
    };
    const e = ensembleScore(ctx, weights, { stages: [], maxLogOdds: 12 });
    expect(e.logOdds).toBeCloseTo(-0.5);
    expect(e.contributions.map((c) => c.symbol)).toEqual(['headers.spf_fail', 'content.urgency_1']);
    expect(e.symbols).toContain('content.unknown_symbol');
  });

  it('one strong signal can carry the verdict', () => {
    const ctx = { offline: { providers: {}, analyzers: { urls: result('urls', ['ip_url']) } } };
    expect(ensembleScore(ctx, weights, { stages: [], maxLogOdds: 12 }).probability).toBeGreaterThan(
      0.5,
    );
  });

  it('counts indicator types of analyzers that report no symbols', () => {
    const ctx = {
      s1: {
        providers: {},
        analyzers: {
          thirdparty: result('thirdparty', undefined, [
            { type: 'credential_form', value: 'a', confidence: 0.9 },
            { type: 'credential_form', value: 'b', confidence: 0.8 },
          ]),
        },
      },
    };
    const e = ensembleScore(ctx, weights, { stages: [], maxLogOdds: 12 });
    expect(e.logOdds).toBeCloseTo(-0.5);
    expect(e.indicators).toHaveLength(2);
  });

  it('reads only the configured stages, skips failed analyzers and malformed stages', () => {
    const failed = { ...result('urls', ['ip_url']), status: 'failed' as const };
    const ctx = {
      a: { providers: {}, analyzers: { headers: result('headers', ['spf_fail']) } },
      b: { providers: {}, analyzers: { urls: failed } },
      c: 'not a stage',
    };
    expect(ensembleScore(ctx, weights, { stages: ['b'], maxLogOdds: 12 }).logOdds).toBe(-3);
    expect(ensembleScore(ctx, weights, { stages: [], maxLogOdds: 12 }).logOdds).toBe(-1);
  });

  it('answers "not phishing" with the bias when the email has no context', () => {
    const file = join(dir, 'w.yaml');
    writeFileSync(file, 'bias: -2\nsymbols: {}\n');
    const a = analyzeScore(makeEmail({}), ScorerSettings.parse({ weights_file: file }));
    expect(a.is_phishing).toBe(false);
    expect(a.confidence).toBeCloseTo(1 - 1 / (1 + Math.exp(2)), 3);
  });

  it('the shipped weights file parses', () => {
    expect(() => analyzeScore(makeEmail({}), ScorerSettings.parse({}))).not.toThrow();
  });

  it('keeps the last good weights when the file breaks, and says why', () => {
    const file = join(dir, 'live.yaml');
    writeFileSync(file, 'bias: -1\n');
    expect(weightsFor(file, 0).weights.bias).toBe(-1);
    writeFileSync(file, 'bias: [not a number\n');
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    const r = weightsFor(file, 0);
    expect(r.weights.bias).toBe(-1);
    expect(r.error).toMatch(/YAML|bias/);
  });

  it('refuses a broken file on first load with a stable code', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'bias: "x"\n');
    expect(() => weightsFor(file, 0)).toThrow(
      expect.objectContaining({ code: 'TRAWL_ERR_SCORER_WEIGHTS_INVALID' }),
    );
  });
});

describe('fitWeights', () => {
  const outcome = (
    label: 'phishing' | 'ham',
    index: number,
    symbols: string[],
  ): MessageOutcome => ({
    file: `${label}-${index}.eml`,
    label,
    index,
    predicted: false,
    probability: 0,
    analyzers: {},
    indicatorTypes: [],
    indicators: [],
    symbols,
  });
  const outs: MessageOutcome[] = [];
  for (let i = 0; i < 80; i++) {
    outs.push(outcome('phishing', i, i % 4 === 0 ? ['h.weak'] : ['h.strong', 'h.weak']));
    outs.push(outcome('ham', i, i % 5 === 0 ? ['h.weak', 'h.benign'] : ['h.benign']));
  }

  it('learns non-negative weights on the training half and places the bias', () => {
    const f = fitWeights(outs);
    expect(f.symbols['h.strong']).toBeGreaterThan(1);
    expect(f.symbols['h.benign']).toBeUndefined(); // would be negative: clamped to 0
    expect(f.train.messages).toBe(80);
    expect(f.train.fp).toBe(0);
    expect(f.train.tp).toBe(20); // the even-numbered phishing with the strong symbol
    const text = weightsYaml(f, 'header line');
    expect(text).toMatch(/^# header line/);
    expect(parseWeights(text, 'fit').symbols['h.strong']).toBe(f.symbols['h.strong']);
  });
});
