import { describe, expect, it } from 'vitest';
import { readAuthResults } from '../../src/shared/auth-results.ts';
import { makeEmail } from '../fixtures/emails.ts';

const RECEIVED =
  'from mail.sender.test (mail.sender.test [198.51.100.7]) by mx1.example.org (Postfix)';

const read = (headers: Record<string, string | string[]>, trusted: string[] = []) =>
  readAuthResults(makeEmail({ headers }), trusted);

describe('Authentication-Results read as RFC 8601 says', () => {
  it('believes the receiving organisation’s own hop (authserv-id of the topmost Received’s host)', () => {
    const a = read({
      received: RECEIVED,
      'authentication-results':
        'mx1.example.org; spf=pass smtp.mailfrom=bank.test; dkim=pass header.d=bank.test; dmarc=pass header.from=bank.test',
    });
    expect(a).toMatchObject({ spf: 'pass', dkim: 'pass', dmarc: 'pass', verified: true });
    expect(a.dkim_pass_domains).toEqual(['bank.test']);
  });

  it('ignores results another hop wrote (a list host, the sender’s own server)', () => {
    const a = read({
      received: RECEIVED,
      'authentication-results': [
        'lists.project.test; dkim=fail header.d=yahoo.test',
        'mx.sender.test; dmarc=pass header.from=paypal.com',
      ],
    });
    expect(a).toMatchObject({ spf: 'none_seen', dkim: 'none_seen', dmarc: 'none_seen' });
    expect(a.verified).toBe(false);
  });

  it('reads only the configured authserv-ids when they are set', () => {
    const headers = {
      received: RECEIVED,
      'authentication-results': [
        'mx1.example.org; dkim=fail header.d=x.test',
        'gateway.example.org; dkim=pass header.d=x.test; dmarc=pass header.from=x.test',
      ],
    };
    expect(read(headers, ['gateway.example.org'])).toMatchObject({
      dkim: 'pass',
      dmarc: 'pass',
      verified: true,
    });
    expect(read(headers).dkim).toBe('fail');
  });

  it('an anonymous topmost header (Microsoft 365 writes no id) counts, for failures only', () => {
    const a = read({
      received: 'from a.prod.outlook.com by b.prod.outlook.com with HTTPS',
      'authentication-results':
        'spf=softfail (sender IP is 203.0.113.9) smtp.mailfrom=x.test; dkim=none; dmarc=pass action=none header.from=x.test',
    });
    expect(a).toMatchObject({ spf: 'softfail', dmarc: 'pass', verified: false });
  });

  const sealed = {
    received: RECEIVED,
    'authentication-results':
      'mx1.example.org; dkim=fail header.d=author.test; dmarc=fail header.from=author.test; arc=pass',
    'arc-seal': [
      'i=2; a=rsa-sha256; t=1; cv=pass; d=lists.project.test; s=arc; b=x',
      'i=1; a=rsa-sha256; t=1; cv=none; d=author.test; s=arc; b=x',
    ],
    'arc-authentication-results': [
      'i=2; lists.project.test; dkim=pass header.d=author.test; dmarc=pass header.from=author.test',
      'i=1; mx.author.test; spf=pass smtp.mailfrom=author.test',
    ],
  };

  it('reads through ARC when the trusted hop says the chain holds and its sealer is trusted', () => {
    const a = readAuthResults(makeEmail({ headers: sealed }), [], {
      arcSealers: ['project.test'],
    });
    expect(a).toMatchObject({
      dkim: 'pass',
      dmarc: 'pass',
      arc: 'pass',
      via_arc: true,
      arc_sealer: 'lists.project.test',
      arc_trusted: true,
    });
  });

  it('does not read the ARC results of a sealer nobody configured (anyone can seal a spoof)', () => {
    const a = read(sealed);
    expect(a).toMatchObject({
      dkim: 'fail',
      dmarc: 'fail',
      arc: 'pass',
      via_arc: false,
      arc_sealer: 'lists.project.test',
      arc_trusted: false,
    });
  });

  it('runs in linear time on a hostile header', () => {
    const t = performance.now();
    read({
      received: RECEIVED,
      'authentication-results': `mx1.example.org;${' dkim=pass;'.repeat(50_000)}`,
    });
    read({ received: `by ${'a.'.repeat(100_000)}`, 'authentication-results': 'x; spf=fail' });
    expect(performance.now() - t).toBeLessThan(2000);
  });
});
