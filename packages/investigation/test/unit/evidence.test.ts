import { Evidence, JobSearchQuery, searchFiltersOf } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import { sampleEmail as email } from '../../../../test/support/sample-email.ts';
import { buildEvidence, scoreOf, withEvidence } from '../../src/index.ts';

describe('evidence', () => {
  it('is bounded: a message of 300 links and 80 attachments keeps the caps and says what it cut', () => {
    const links = Array.from(
      { length: 300 },
      (_, i) => `<a href="https://h${i}.example/x">l${i}</a>`,
    );
    const ev = buildEvidence({
      ...email,
      headers: {
        ...email.headers,
        recipients: Array.from({ length: 150 }, (_, i) => `r${i}@corp.example`),
        raw_headers: {
          received: Array.from(
            { length: 40 },
            () => `from a (b [1.2.3.4]) by c; ${'x'.repeat(5000)}`,
          ),
        },
      },
      body_html: links.join(' '),
      attachments: Array.from({ length: 80 }, (_, i) => ({
        filename: `f${i}.txt`,
        content_type: 'text/plain',
        content: Buffer.from('hello').toString('base64'),
        size: 5,
      })),
    });
    expect(Evidence.safeParse(ev).success).toBe(true);
    expect(ev.urls).toHaveLength(100);
    expect(ev.attachments).toHaveLength(50);
    expect(ev.message.to).toHaveLength(100);
    expect(ev.received.hops).toHaveLength(20);
    expect(ev.received.sending_ip).toBe('1.2.3.4');
    expect(ev.truncated).toMatchObject({
      urls: expect.any(Number),
      attachments: 30,
      to: 50,
      received: 20,
    });
    expect(JSON.stringify(ev).length).toBeLessThan(200_000);
  });

  it('leaves an indicator that already names its evidence as it is', () => {
    const ev = buildEvidence({
      ...email,
      body_text: 'see https://a.example/x and https://b.example/y',
    });
    const r = withEvidence(
      {
        is_phishing: true,
        threat_level: 'high',
        confidence: 0.9,
        summary: '',
        recommended_action: 'review',
        indicators: [
          { type: 'suspicious_url', value: 'b.example looks bad', confidence: 0.5 },
          {
            type: 'suspicious_url',
            value: 'x',
            confidence: 0.5,
            evidence: { kind: 'url', index: 0 },
          },
        ],
      },
      ev,
    );
    expect(r.indicators.map((i) => i.evidence)).toEqual([
      { kind: 'url', index: 1 },
      { kind: 'url', index: 0 },
    ]);
  });
});

describe('the score by symbol and group', () => {
  const answer = (details: Record<string, unknown>) => ({
    analyzer_id: 'a',
    status: 'success' as const,
    is_phishing: true,
    confidence: 0.9,
    threat_level: 'high' as const,
    indicators: [],
    analyzer_details: details,
    attempts: 1,
    duration_ms: 1,
  });
  it('is the last scorer’s contributions and groups, named by stage and analyzer', () => {
    const score = scoreOf({
      signals: { providers: {}, analyzers: { headers: answer({ symbols: ['x'] }) } },
      score: {
        providers: {},
        analyzers: {
          scorer: answer({
            probability: 0.93,
            log_odds: 2.6,
            bias: -3,
            contributions: [
              { symbol: 'urls.ip_url', weight: 2, group: 'deceptive_links' },
              { symbol: 'content.threat_2', weight: 1.1, group: 'pressure' },
            ],
            groups: {
              deceptive_links: { sum: 2, counted: 2 },
              pressure: { sum: 1.1, counted: 1.1 },
            },
          }),
        },
      },
    });
    expect(score).toEqual({
      by: 'score.scorer',
      probability: 0.93,
      log_odds: 2.6,
      bias: -3,
      contributions: [
        { symbol: 'urls.ip_url', weight: 2, group: 'deceptive_links' },
        { symbol: 'content.threat_2', weight: 1.1, group: 'pressure' },
      ],
      groups: { deceptive_links: { sum: 2, counted: 2 }, pressure: { sum: 1.1, counted: 1.1 } },
    });
  });
  it('is absent when no analyzer scored, or its details are malformed', () => {
    expect(scoreOf({ s: { providers: {}, analyzers: { a: answer({}) } } })).toBeUndefined();
    expect(
      scoreOf({
        s: {
          providers: {},
          analyzers: { a: answer({ contributions: [{ symbol: 3 }], log_odds: 1 }) },
        },
      }),
    ).toBeUndefined();
  });
});

describe('job search query', () => {
  it('normalises values into the terms the orchestrator indexes', () => {
    const q = JobSearchQuery.parse({
      sender: 'Security@Bank.Example',
      recipient: '@corp.example',
      subject: 'Account LOCKED!',
      url_domain: 'bücher.example',
      is_phishing: 'true',
    });
    expect(searchFiltersOf(q).terms).toEqual([
      'url:xn--bcher-kva.example',
      'from:security@bank.example',
      'rcpt_dom:corp.example',
      'subj:account',
      'subj:locked',
      'phish:true',
    ]);
  });
});
