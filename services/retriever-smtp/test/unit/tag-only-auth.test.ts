/**
 * Issue 32: the tag-only mode (never refuse, quarantine, prefix or hold: only the headers) and the
 * header edits of the authentication check (forged Authentication-Results removed, Trawl's own on
 * top), with the settings that drive them.
 */
import type { VerdictRequest } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import {
  claimsAuthservId,
  decide,
  editHeaders,
  SmtpSettings,
  smtpSettingsFromEnv,
} from '../../src/index.ts';

const BASE = { mail_orchestrator_url: 'http://mail-orchestrator:8002' };

function verdict(
  level: VerdictRequest['result']['threat_level'],
  phishing: boolean,
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
  };
}

describe('tag-only mode', () => {
  const s = SmtpSettings.parse({ ...BASE, tag_only: true, mode: 'before-queue' });

  it('delivers every verdict tagged, naming what the policy would have done', () => {
    for (const [level, would] of [
      ['none', 'deliver'],
      ['medium', 'prefix'],
      ['high', 'quarantine'],
      ['critical', 'reject'],
    ] as const) {
      const d = decide({ kind: 'verdict', verdict: verdict(level, level !== 'none') }, s);
      expect(d).toMatchObject({ kind: 'deliver', action: 'deliver' });
      expect(d.kind === 'deliver' && d.quarantine).toBeFalsy();
      expect(d.kind === 'deliver' && d.subjectPrefix).toBeFalsy();
      expect(d.kind !== 'tempfail' && d.headers).toContainEqual(['X-Trawl-Policy-Action', would]);
    }
  });

  it('never holds a message: no verdict by the deadline is delivered tagged unanalyzed', () => {
    const d = decide({ kind: 'timeout', reason: 'slow' }, s);
    expect(d).toMatchObject({ kind: 'deliver', headers: [['X-Trawl-Verdict', 'unanalyzed']] });
  });

  it('needs no quarantine address, and is read from TRAWL_SMTP_TAG_ONLY', () => {
    expect(() => SmtpSettings.parse({ ...BASE, tag_only: 'true' })).not.toThrow();
    expect(() => SmtpSettings.parse({ ...BASE })).toThrow(/quarantine_address/);
    const env = smtpSettingsFromEnv({
      TRAWL_SMTP_MAIL_ORCHESTRATOR_URL: 'http://m:8002',
      TRAWL_SMTP_TAG_ONLY: 'yes',
      TRAWL_SMTP_AUTHSERV_ID: 'mx.example.org',
      TRAWL_SMTP_DNS_SERVERS: '127.0.0.1:5353, 192.0.2.53',
    });
    expect(env.ok && env.value).toMatchObject({
      tag_only: true,
      verify_auth: true,
      authserv_id: 'mx.example.org',
      dns_servers: ['127.0.0.1:5353', '192.0.2.53'],
    });
    const bad = smtpSettingsFromEnv({
      TRAWL_SMTP_MAIL_ORCHESTRATOR_URL: 'http://m:8002',
      TRAWL_SMTP_TAG_ONLY: 'maybe',
      TRAWL_SMTP_AUTHSERV_ID: 'bad id;',
    });
    const problems = bad.ok ? '' : bad.problems.join('\n');
    expect(problems).toContain('TRAWL_SMTP_TAG_ONLY');
    expect(problems).toContain('TRAWL_SMTP_AUTHSERV_ID');
  });
});

describe('Authentication-Results edits', () => {
  it('removes the forged fields of its authserv-id (with their continuation lines), keeps others, writes its own on top', () => {
    const raw = Buffer.from(
      [
        'Received: from x',
        'Authentication-Results: MX.trawl.test; dkim=pass;',
        '\tdmarc=pass header.from=bank.test',
        'Authentication-Results: mx.upstream.example; spf=fail',
        'Subject: hi',
        '',
        'Authentication-Results: mx.trawl.test; in the body stays',
        '',
      ].join('\r\n'),
    );
    const out = editHeaders(raw, {
      add: [],
      prepend: ['Authentication-Results: mx.trawl.test;\r\n\tspf=fail smtp.mailfrom=bank.test'],
      drop: (name, field) =>
        name === 'authentication-results' &&
        claimsAuthservId(field.toString().slice(field.indexOf(':') + 1), 'mx.trawl.test'),
    }).toString();
    expect(out).toBe(
      [
        'Authentication-Results: mx.trawl.test;',
        '\tspf=fail smtp.mailfrom=bank.test',
        'Received: from x',
        'Authentication-Results: mx.upstream.example; spf=fail',
        'Subject: hi',
        '',
        'Authentication-Results: mx.trawl.test; in the body stays',
        '',
      ].join('\r\n'),
    );
  });
});
