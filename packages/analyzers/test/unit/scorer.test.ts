import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnalyzerResult } from '@trawl/contracts';
import { afterAll, describe, expect, it } from 'vitest';
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

function declared(
  id: string,
  scores: Record<string, number>,
  groups: Record<string, string> = {},
): AnalyzerResult {
  return {
    ...result(id, Object.keys(scores)),
    analyzer_details: { symbols: Object.keys(scores), scores, groups },
  };
}

describe('scorer: declared scores and groups', () => {
  const none = parseWeights('bias: -3\n', 'test');
  const stage = (...rs: AnalyzerResult[]) => ({
    offline: { providers: {}, analyzers: Object.fromEntries(rs.map((r) => [r.analyzer_id, r])) },
  });

  it('uses the score an analyzer declared, unless the weights file overrides it', () => {
    const ctx = stage(declared('urls', { lookalike: 2.5 }), declared('rules', { 'ip-login': 1.5 }));
    expect(ensembleScore(ctx, none, { stages: [], maxLogOdds: 12 }).logOdds).toBeCloseTo(1);
    const over = parseWeights('bias: -3\nsymbols:\n  urls.lookalike: 1\n', 'test');
    expect(ensembleScore(ctx, over, { stages: [], maxLogOdds: 12 }).logOdds).toBeCloseTo(-0.5);
  });

  it('counts the symbols of one group together up to its cap, across analyzers', () => {
    // reply_to: max 2.5. The same fact seen by headers and rules counts once up to the cap.
    const ctx = stage(
      declared('headers', { reply_to_free_mail: 1.6 }, { reply_to_free_mail: 'reply_to' }),
      declared('rules', { 'reply-to-free-mail': 1.2 }, { 'reply-to-free-mail': 'reply_to' }),
    );
    const e = ensembleScore(ctx, none, { stages: [], maxLogOdds: 12 });
    expect(e.logOdds).toBeCloseTo(-0.5);
    expect(e.groups.reply_to).toEqual({ sum: 2.8, counted: 2.5 });
  });

  it('an explaining symbol cancels its group and never goes below the group floor', () => {
    const ctx = stage(
      declared(
        'headers',
        { reply_to_free_mail: 1.6, list_explains_reply_to: -3, spf_fail: 1.5 },
        { reply_to_free_mail: 'reply_to', list_explains_reply_to: 'reply_to', spf_fail: 'auth' },
      ),
    );
    // reply_to: 1.6 - 3 → floor 0; auth 1.5 stands
    expect(ensembleScore(ctx, none, { stages: [], maxLogOdds: 12 }).logOdds).toBeCloseTo(-1.5);
  });

  it('standing evidence lowers the score, bounded by its group', () => {
    const ctx = stage(
      declared(
        'headers',
        { dmarc_pass_own_domain: -3, dmarc_pass_brand_domain: -2 },
        { dmarc_pass_own_domain: 'standing', dmarc_pass_brand_domain: 'standing' },
      ),
    );
    expect(ensembleScore(ctx, none, { stages: [], maxLogOdds: 12 }).logOdds).toBeCloseTo(-7);
  });

  it('the weights file can change a cap; an implausible declared score is not believed', () => {
    const ctx = stage(
      declared('headers', { a: 1.6, b: 1.2 }, { a: 'reply_to', b: 'reply_to' }),
      declared('evil', { everything: 1000 }),
    );
    const w = parseWeights('bias: -3\ngroups:\n  reply_to: { max: 1, min: 0 }\n', 'test');
    expect(ensembleScore(ctx, w, { stages: [], maxLogOdds: 12 }).logOdds).toBeCloseTo(-2);
  });
});
