import { describe, expect, it } from 'vitest';
import { analyzeHeaders, HeadersSettings } from '../../src/headers/index.ts';
import { hamColleague, makeEmail } from '../fixtures/emails.ts';

const settings = HeadersSettings.parse({});
const types = (e: ReturnType<typeof makeEmail>, s = settings) =>
  analyzeHeaders(e, s).indicators?.map((i) => i.type) ?? [];

describe('headers analyzer', () => {
  it('raises nothing on an ordinary message without authentication results', () => {
    const a = analyzeHeaders(hamColleague(), settings);
    expect(a.indicators).toEqual([]);
    expect(a.is_phishing).toBe(false);
  });

  it('flags explicit SPF, DKIM and DMARC failures', () => {
    const e = makeEmail({
      headers: {
        received: 'from sender.x.test by mx.example.net; Mon, 1 Jan 2024 10:00:00 +0000',
        'authentication-results':
          'mx.example.net; spf=fail smtp.mailfrom=x.test; dkim=fail header.d=x.test; dmarc=fail header.from=example.org',
      },
    });
    const a = analyzeHeaders(e, settings);
    expect(
      a.indicators
        ?.filter((i) => i.type === 'auth_failure')
        .map((i) => i.value)
        .sort(),
    ).toEqual(['DKIM fail', 'DMARC fail', 'SPF fail']);
    expect(a.is_phishing).toBe(true);
  });

  it('flags the recipient’s own domain in From when its receiver finds SPF failing', () => {
    const spoof = (from: string, spf: string) =>
      makeEmail({
        from,
        to: ['bob@example.net'],
        headers: {
          received: 'from relay.x.test by mx.example.net; Mon, 1 Jan 2024 10:00:00 +0000',
          'authentication-results': `mx.example.net; spf=${spf} smtp.mailfrom=example.net; dkim=none; dmarc=none`,
        },
      });
    const symbols = (e: ReturnType<typeof makeEmail>) =>
      analyzeHeaders(e, settings).analyzer_details?.symbols as string[] | undefined;
    expect(symbols(spoof('IT desk <it@example.net>', 'softfail'))).toContain(
      'own_domain_unauthenticated',
    );
    // the same domain passing SPF, or another domain failing it, is not that
    expect(symbols(spoof('IT desk <it@example.net>', 'pass'))).not.toContain(
      'own_domain_unauthenticated',
    );
    expect(symbols(spoof('IT desk <it@other.test>', 'softfail'))).not.toContain(
      'own_domain_unauthenticated',
    );
    // free-mail is nobody's own domain
    const free = makeEmail({
      from: 'a@gmail.com',
      to: ['bob@gmail.com'],
      headers: {
        received: 'from relay.x.test by mx.example.net; Mon, 1 Jan 2024 10:00:00 +0000',
        'authentication-results': 'mx.example.net; spf=softfail smtp.mailfrom=gmail.com',
      },
    });
    expect(symbols(free)).not.toContain('own_domain_unauthenticated');
  });

  it('does not treat pass or none as a failure', () => {
    const e = makeEmail({
      headers: {
        'authentication-results': 'mx; spf=pass; dkim=none; dmarc=none',
        'received-spf': 'None (no record)',
      },
    });
    expect(types(e)).not.toContain('auth_failure');
  });

  it('reads Received-SPF softfail', () => {
    const e = makeEmail({
      headers: { 'received-spf': 'SoftFail (domain of transitioning x does not designate)' },
    });
    expect(types(e)).toContain('auth_failure');
  });

  it('flags a free-mail Reply-To on a corporate sender', () => {
    const e = makeEmail({ headers: { 'reply-to': 'Billing <billing.dept@gmail.com>' } });
    expect(types(e)).toContain('reply_to_mismatch');
  });

  it('flags a Reply-To to another free-mail mailbox of the same provider as the sender', () => {
    // on free mail the mailbox is the sender: the advance-fee "write to my private address"
    const e = makeEmail({
      from: 'Ali <ali8888imrann@gmail.com>',
      headers: { 'reply-to': 'ali888imram@gmail.com' },
    });
    expect(types(e)).toContain('reply_to_mismatch');
    const same = makeEmail({
      from: 'Ali <ali8888imrann@gmail.com>',
      headers: { 'reply-to': 'Ali8888Imrann@gmail.com' },
    });
    expect(types(same)).not.toContain('reply_to_mismatch');
    // an organisation's own mailboxes answer for each other
    const org = makeEmail({ headers: { 'reply-to': 'billing@example.org' } });
    expect(types(org)).not.toContain('reply_to_mismatch');
  });

  it('ignores a Reply-To at the mailing list that relays the message', () => {
    const e = makeEmail({
      headers: { 'reply-to': 'list@lists.example.com', 'list-id': '<talk.lists.example.com>' },
    });
    expect(types(e)).not.toContain('reply_to_mismatch');
  });

  it('flags a Return-Path at another domain', () => {
    const e = makeEmail({ headers: { 'return-path': '<bounce@other-domain.test>' } });
    expect(types(e)).toContain('return_path_mismatch');
  });

  it('flags a display name that shows another address', () => {
    const e = makeEmail({ from: '"ceo@bigcorp.com" <x@random-host.test>' });
    expect(types(e)).toContain('display_name_spoofing');
  });

  it('flags a display name naming a brand the sender domain does not own', () => {
    const e = makeEmail({ from: 'PayPal Service <service@account-check.test>' });
    const a = analyzeHeaders(e, settings);
    expect(
      a.indicators?.some((i) => i.type === 'display_name_spoofing' && i.value.includes('paypal')),
    ).toBe(true);
  });

  it('does not flag the brand sending from its own domain', () => {
    const e = makeEmail({ from: 'PayPal <service@paypal.com>' });
    expect(types(e)).not.toContain('display_name_spoofing');
  });

  it('flags a sender domain that looks like a brand', () => {
    const e = makeEmail({ from: 'Support <help@paypa1.com>' });
    expect(types(e)).toContain('domain_spoofing');
  });

  it('flags a look-alike of the organisation domain', () => {
    const s = HeadersSettings.parse({ organisation_domains: ['acmecorp.com'] });
    const e = makeEmail({ from: 'IT <it@acmec0rp.com>' });
    expect(types(e, s)).toContain('internal_domain_lookalike');
  });

  it('flags a punycode sender domain', () => {
    const e = makeEmail({ from: 'x <a@xn--pple-43d.com>' });
    expect(types(e)).toContain('homograph_domain');
  });

  it('flags a message sent from the recipient’s own address', () => {
    const e = makeEmail({ from: 'bob@example.net', to: ['bob@example.net'] });
    expect(types(e)).toContain('domain_spoofing');
  });

  it('flags the recipient address used in the subject', () => {
    const e = makeEmail({
      subject: 'bob@example.net, your mailbox is full',
      to: ['bob@example.net'],
    });
    expect(types(e)).toContain('header_anomaly');
  });

  it('flags a machine-generated sender domain', () => {
    const e = makeEmail({ from: 'x <news@k8x2hq9z.com>' });
    expect(types(e)).toContain('suspicious_sender');
  });

  it('flags a missing Message-ID', () => {
    const e = makeEmail({ headers: { 'message-id': '' } });
    expect(types(e)).toContain('header_anomaly');
  });
});
