import { describe, expect, it } from 'vitest';
import {
  AnalysisResult,
  AnalyzerAnswer,
  AnalyzerResult,
  EnrichmentResult,
  Indicator,
  Job,
  MailRetrievers,
  parseWith,
  ServiceConfigFile,
} from '../../src/index.ts';

const result = () => ({
  is_phishing: true,
  threat_level: 'high',
  confidence: 0.8,
  summary: 'Phishing: credential form',
  recommended_action: 'quarantine',
  indicators: [
    { type: 'credential_form', value: 'form posts password to evil.example', confidence: 0.9 },
  ],
});

const pathsOf = (schema: any, v: unknown) => {
  const r = parseWith(schema, v);
  return r.ok ? [] : r.problems.map((p) => p.path);
};

describe('AnalysisResult and Indicator (spec 2.2, 2.3)', () => {
  it('accepts a valid result', () => expect(pathsOf(AnalysisResult, result())).toEqual([]));
  it.each([
    ['threat_level', { threat_level: 'severe' }, '/threat_level'],
    ['confidence above 1', { confidence: 1.5 }, '/confidence'],
    ['confidence below 0', { confidence: -0.1 }, '/confidence'],
    ['recommended_action', { recommended_action: 'delete' }, '/recommended_action'],
    ['is_phishing not boolean', { is_phishing: 'yes' }, '/is_phishing'],
    ['summary missing', { summary: undefined }, '/summary'],
    [
      'indicator confidence',
      { indicators: [{ type: 'x', value: 'v', confidence: 2 }] },
      '/indicators/0/confidence',
    ],
    [
      'indicator type label',
      { indicators: [{ type: 'Domain Spoofing', value: 'v', confidence: 0.5 }] },
      '/indicators/0/type',
    ],
  ])('rejects bad %s', (_n, patch, path) => {
    expect(pathsOf(AnalysisResult, { ...result(), ...patch })).toContain(path);
  });
  it('accepts every threat level and action', () => {
    for (const t of ['none', 'low', 'medium', 'high', 'critical']) {
      expect(pathsOf(AnalysisResult, { ...result(), threat_level: t })).toEqual([]);
    }
    for (const a of ['allow', 'flag', 'review', 'quarantine']) {
      expect(pathsOf(AnalysisResult, { ...result(), recommended_action: a })).toEqual([]);
    }
  });
  it('accepts an empty indicator list', () => {
    expect(pathsOf(AnalysisResult, { ...result(), indicators: [] })).toEqual([]);
    expect(
      pathsOf(Indicator, { type: 'urgency_language', value: 'act now', confidence: 0 }),
    ).toEqual([]);
  });
});

describe('AnalyzerAnswer and AnalyzerResult (spec 2.4)', () => {
  it('lets a plugin leave summary, action and threat level to the platform', () => {
    const r = parseWith(AnalyzerAnswer, { is_phishing: false, confidence: 0.9, indicators: [] });
    expect(r.ok).toBe(true);
  });
  it('requires analyzer_id, status and attempts on a stored analyzer result', () => {
    const base = {
      is_phishing: false,
      confidence: 0.9,
      threat_level: 'none',
      indicators: [],
      duration_ms: 3,
    };
    expect(pathsOf(AnalyzerResult, base)).toEqual(
      expect.arrayContaining(['/analyzer_id', '/status', '/attempts']),
    );
    expect(
      pathsOf(AnalyzerResult, { ...base, analyzer_id: 'a', status: 'success', attempts: 1 }),
    ).toEqual([]);
    expect(
      pathsOf(AnalyzerResult, { ...base, analyzer_id: 'a', status: 'done', attempts: 1 }),
    ).toContain('/status');
  });
});

describe('EnrichmentResult (spec 2.5)', () => {
  it('accepts provider data and rejects a missing provider id', () => {
    expect(pathsOf(EnrichmentResult, { provider_id: 'directory', data: { vip: true } })).toEqual(
      [],
    );
    expect(pathsOf(EnrichmentResult, { data: {} })).toContain('/provider_id');
    expect(pathsOf(EnrichmentResult, { provider_id: 'd', data: {}, ttl_seconds: -1 })).toContain(
      '/ttl_seconds',
    );
  });
});

describe('Job (spec 2.6)', () => {
  const job = {
    job_id: '6f1c2a56-0a43-4a8e-9a56-3c5b1c2d9e10',
    email_id: 'em_1',
    status: 'queued',
    workflow: 'default',
    created_at: '2024-01-01T00:00:00Z',
  };
  it('accepts a queued job', () => expect(pathsOf(Job, job)).toEqual([]));
  it('rejects a job id that is not a UUID and an unknown status', () => {
    expect(pathsOf(Job, { ...job, job_id: '42' })).toContain('/job_id');
    expect(pathsOf(Job, { ...job, status: 'running' })).toContain('/status');
  });
  it('carries a result when completed', () => {
    expect(pathsOf(Job, { ...job, status: 'completed', result: result() })).toEqual([]);
  });
});

describe('Service configuration file (spec 2.9)', () => {
  it('applies defaults to an empty file', () => {
    const r = ServiceConfigFile.parse({});
    expect(r.workflow.default_workflow_id).toBe('default');
    expect(r.analyzer.timeout_ms).toBe(30000);
    expect(r.verdict.thresholds).toEqual({ low: 0.3, medium: 0.5, high: 0.7, critical: 0.9 });
  });
  it('reads form A and form B', () => {
    const r = parseWith(ServiceConfigFile, {
      version: '1.2',
      platform: { log_level: 'INFO', debug: false },
      analyzers: { headers: { enabled: true, settings: { confidence_threshold: 0.6 } } },
      plugins: {
        analyzers: {
          sentiment: { enabled: true, url: 'http://sentiment:8000', settings: { model: 'x' } },
        },
        context_providers: { directory: { enabled: false, url: 'http://dir:8000' } },
      },
    });
    expect(r.ok).toBe(true);
  });
  it.each([
    ['analyzer url not http', { analyzers: { a: { url: 'ftp://x' } } }, '/analyzers/a/url'],
    [
      'plugin without url',
      { plugins: { analyzers: { p: { enabled: true } } } },
      '/plugins/analyzers/p/url',
    ],
    [
      'plugin without enabled',
      { plugins: { analyzers: { p: { url: 'http://p' } } } },
      '/plugins/analyzers/p/enabled',
    ],
    ['bad log level', { platform: { log_level: 'loud' } }, '/platform/log_level'],
    [
      'thresholds out of order',
      { verdict: { thresholds: { low: 0.8, medium: 0.5, high: 0.7, critical: 0.9 } } },
      '/verdict/thresholds',
    ],
  ])('rejects %s', (_n, v, path) => {
    expect(pathsOf(ServiceConfigFile, v)).toContain(path);
  });
});

describe('TRAWL_MAIL_RETRIEVERS entries (spec 2.10)', () => {
  it('accepts entries and applies defaults', () => {
    const r = MailRetrievers.parse({ imap: { url: 'http://retriever-imap:8000' } });
    expect(r.imap).toEqual({ url: 'http://retriever-imap:8000', priority: 0, enabled: true });
  });
  it('rejects a bad url and a non-integer priority', () => {
    expect(pathsOf(MailRetrievers, { a: { url: 'nope' } })).toContain('/a/url');
    expect(pathsOf(MailRetrievers, { a: { url: 'http://a', priority: 1.5 } })).toContain(
      '/a/priority',
    );
  });
});
