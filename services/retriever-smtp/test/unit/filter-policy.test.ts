import type { VerdictRequest } from '@trawl/contracts';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  createFilter,
  createSmtpMetrics,
  decide,
  editHeaders,
  type IngestClient,
  SmtpSettings,
  smtpSettingsFromEnv,
  VerdictBoard,
} from '../../src/index.ts';

const BASE = {
  mail_orchestrator_url: 'http://mail-orchestrator:8002',
  quarantine_address: 'quarantine@example.org',
};

function verdict(
  level: VerdictRequest['result']['threat_level'],
  phishing: boolean,
  extra: Partial<VerdictRequest> = {},
): VerdictRequest {
  return {
    id: 'abc',
    job_id: '8318aa55-2c31-4e77-a816-90071910c28b',
    result: {
      is_phishing: phishing,
      threat_level: level,
      confidence: 0.9,
      summary: 's',
      recommended_action: phishing ? 'quarantine' : 'allow',
      indicators: [],
    },
    verdict: 'analyzed',
    ...extra,
  };
}

describe('headers', () => {
  it('adds the tags on top, drops forged X-Trawl fields with their continuation lines, keeps the body', () => {
    const raw = Buffer.from(
      'From: a@example.org\r\nX-Trawl-Verdict: clean\r\nx-trawl-score:\r\n 0.0\r\nSubject: Hello\r\n\r\nX-Trawl-Verdict: body text stays\r\n',
    );
    const out = editHeaders(raw, { add: [['X-Trawl-Verdict', 'phishing']] }).toString();
    expect(out).toBe(
      'X-Trawl-Verdict: phishing\r\nFrom: a@example.org\r\nSubject: Hello\r\n\r\nX-Trawl-Verdict: body text stays\r\n',
    );
  });

  it('prefixes the subject once, adds one when missing, and keeps bare-LF messages in LF', () => {
    const p = '[SUSPECTED PHISHING]';
    const once = editHeaders(Buffer.from('Subject: Hi\r\n\r\nb'), { add: [], subjectPrefix: p });
    expect(once.toString()).toBe('Subject: [SUSPECTED PHISHING] Hi\r\n\r\nb');
    expect(editHeaders(once, { add: [], subjectPrefix: p }).toString()).toBe(once.toString());
    expect(
      editHeaders(Buffer.from('From: a@b.c\n\nbody\n'), { add: [], subjectPrefix: p }).toString(),
    ).toBe('From: a@b.c\nSubject: [SUSPECTED PHISHING]\n\nbody\n');
  });

  it('writes no line break a value carries (no header injection)', () => {
    const out = editHeaders(Buffer.from('A: b\r\n\r\n'), {
      add: [['X-Trawl-Original-Recipients', 'x@y.z\r\nBcc: evil@example.org']],
    }).toString();
    expect(out.split('\r\n')[0]).toBe('X-Trawl-Original-Recipients: x@y.z  Bcc: evil@example.org');
  });
});

describe('policy', () => {
  it('maps threat levels to actions; reject becomes quarantine after the queue', () => {
    const after = SmtpSettings.parse(BASE);
    expect(decide({ kind: 'verdict', verdict: verdict('none', false) }, after)).toMatchObject({
      kind: 'deliver',
      action: 'deliver',
    });
    expect(decide({ kind: 'verdict', verdict: verdict('medium', true) }, after)).toMatchObject({
      kind: 'deliver',
      action: 'prefix',
      subjectPrefix: '[SUSPECTED PHISHING]',
    });
    expect(decide({ kind: 'verdict', verdict: verdict('critical', true) }, after)).toMatchObject({
      kind: 'deliver',
      action: 'quarantine',
      quarantine: 'quarantine@example.org',
    });
    const before = SmtpSettings.parse({ ...BASE, mode: 'before-queue' });
    const d = decide({ kind: 'verdict', verdict: verdict('critical', true) }, before);
    expect(d).toMatchObject({ kind: 'reject', code: 550 });
  });

  it('tags the verdict, score, threat level and job', () => {
    const d = decide({ kind: 'verdict', verdict: verdict('high', true) }, SmtpSettings.parse(BASE));
    expect(d.kind === 'deliver' && d.headers).toEqual([
      ['X-Trawl-Verdict', 'phishing'],
      ['X-Trawl-Score', '0.900'],
      ['X-Trawl-Threat-Level', 'high'],
      ['X-Trawl-Job', '8318aa55-2c31-4e77-a816-90071910c28b'],
    ]);
  });

  it('at the deadline: 451 by default, or delivery tagged unanalyzed', () => {
    const timeout = { kind: 'timeout' as const, reason: 'Trawl unreachable' };
    expect(decide(timeout, SmtpSettings.parse(BASE))).toMatchObject({
      kind: 'tempfail',
      code: 451,
    });
    expect(decide(timeout, SmtpSettings.parse({ ...BASE, on_timeout: 'deliver' }))).toEqual({
      kind: 'deliver',
      action: 'deliver',
      headers: [['X-Trawl-Verdict', 'unanalyzed']],
    });
  });

  it('an unanalyzed verdict takes its own action, whatever its threat level says', () => {
    const v = verdict('none', false, { verdict: 'unanalyzed', job_id: 'unanalyzed:abc' });
    const d = decide({ kind: 'verdict', verdict: v }, SmtpSettings.parse(BASE));
    expect(d).toMatchObject({ kind: 'deliver', action: 'quarantine' });
    expect(d.kind === 'deliver' && d.headers[0]).toEqual(['X-Trawl-Verdict', 'unanalyzed']);
  });
});

describe('settings', () => {
  it('reads the policy as level=action pairs and names the variable of each problem', () => {
    const ok = smtpSettingsFromEnv({
      TRAWL_SMTP_MAIL_ORCHESTRATOR_URL: 'http://m:8002',
      TRAWL_SMTP_POLICY: 'high=prefix, critical=prefix',
      TRAWL_SMTP_UNANALYZED_ACTION: 'deliver',
    });
    expect(ok.ok && ok.value.policy).toEqual({
      none: 'deliver',
      low: 'deliver',
      medium: 'prefix',
      high: 'prefix',
      critical: 'prefix',
    });
    const bad = smtpSettingsFromEnv({
      TRAWL_SMTP_MAIL_ORCHESTRATOR_URL: 'ftp://m',
      TRAWL_SMTP_POLICY: 'severe=reject,high=burn',
      TRAWL_SMTP_ON_TIMEOUT: 'drop',
    });
    expect(bad.ok).toBe(false);
    const problems = bad.ok ? [] : bad.problems.join('\n');
    expect(problems).toContain('TRAWL_SMTP_MAIL_ORCHESTRATOR_URL');
    expect(problems).toContain('TRAWL_SMTP_POLICY: unknown threat level "severe"');
    expect(problems).toContain('TRAWL_SMTP_POLICY: high: unknown action "burn"');
    expect(problems).toContain('TRAWL_SMTP_ON_TIMEOUT');
  });

  it('requires a quarantine address when the policy quarantines', () => {
    const r = smtpSettingsFromEnv({ TRAWL_SMTP_MAIL_ORCHESTRATOR_URL: 'http://m:8002' });
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.problems.join()).toContain('TRAWL_SMTP_QUARANTINE_ADDRESS');
    const prefixOnly = smtpSettingsFromEnv({
      TRAWL_SMTP_MAIL_ORCHESTRATOR_URL: 'http://m:8002',
      TRAWL_SMTP_POLICY: 'high=prefix,critical=prefix',
      TRAWL_SMTP_UNANALYZED_ACTION: 'prefix',
    });
    expect(prefixOnly.ok).toBe(true);
  });

  it('refuses a subject prefix that could break the header', () => {
    expect(SmtpSettings.safeParse({ ...BASE, subject_prefix: 'x\r\nBcc: y' }).success).toBe(false);
  });
});

describe('verdict board', () => {
  it('wakes a waiting session, keeps a verdict that came early or late for the retry', async () => {
    const board = new VerdictBoard();
    const ac = new AbortController();
    const waiting = board.wait('abc', ac.signal);
    expect(board.post(verdict('none', false))).toBe(true);
    expect((await waiting)?.job_id).toBe('8318aa55-2c31-4e77-a816-90071910c28b');
    expect(board.known('abc')?.result.threat_level).toBe('none');
    const gaveUp = new AbortController();
    const p = board.wait('other', gaveUp.signal);
    gaveUp.abort();
    expect(await p).toBeUndefined();
    expect(board.waiting).toBe(0);
  });
});

describe('filter', () => {
  const settings = SmtpSettings.parse({ ...BASE, deadline_ms: 600_000 });
  const raw = Buffer.from('From: a@example.org\r\nSubject: Hi\r\n\r\nbody\r\n');
  function setup(submit: IngestClient['submit']) {
    const board = new VerdictBoard();
    const sent: { from: string; to: string[]; raw: Buffer }[] = [];
    const filter = createFilter({
      settings,
      board,
      ingest: { submit },
      reinjector: { send: async (m) => void sent.push(m), close: () => undefined },
      metrics: createSmtpMetrics(new Registry()),
      logger: pino({ level: 'silent' }),
    });
    return { board, sent, filter };
  }

  it('answers 451 at once when Trawl cannot be reached, without waiting for the deadline', async () => {
    const { filter, sent } = setup(async () => ({
      kind: 'unavailable',
      reason: 'Trawl unreachable',
    }));
    // (the deadline is 10 minutes: waiting for it would fail the test by its timeout)
    const a = await filter.handle(raw, { from: 'a@example.org', to: ['b@example.org'] });
    expect(a.code).toBe(451);
    expect(a.message).toContain('Trawl unreachable');
    expect(sent).toEqual([]);
  });

  it('takes a verdict that comes back before the submission is answered, and keeps it for the retry', async () => {
    let calls = 0;
    const { filter, board, sent } = setup(async (m) => {
      calls++;
      board.post({ ...verdict('critical', true), id: m.id });
      return { kind: 'accepted', jobId: 'j', duplicate: false };
    });
    const env = { from: 'a@example.org', to: ['b@example.org'] };
    const a = await filter.handle(raw, env);
    expect(a.code).toBe(250);
    expect(sent[0]?.to).toEqual(['quarantine@example.org']);
    expect(sent[0]?.raw.toString()).toContain('X-Trawl-Original-Recipients: b@example.org');
    // Postfix offering the same bytes again: answered from the kept verdict, not submitted again
    expect((await filter.handle(raw, env)).code).toBe(250);
    expect(calls).toBe(1);
    expect(sent[1]?.to).toEqual(['quarantine@example.org']);
  });
});
