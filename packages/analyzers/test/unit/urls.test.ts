import { describe, expect, it } from 'vitest';
import { isNonRoutableIp } from '../../src/shared/ip.ts';
import { findLookalike, protectedNames } from '../../src/shared/lookalike.ts';
import { editDistance, skeleton } from '../../src/shared/similarity.ts';
import { analyzeUrls, UrlsSettings } from '../../src/urls/index.ts';
import { hamNewsletter, makeEmail } from '../fixtures/emails.ts';

const settings = UrlsSettings.parse({});
const html = (body: string) =>
  makeEmail({ from: 'Shop <news@shop.example>', html: `<html><body>${body}</body></html>` });
const types = (e: ReturnType<typeof makeEmail>, s = settings) =>
  analyzeUrls(e, s).indicators?.map((i) => i.type) ?? [];

describe('urls analyzer', () => {
  it('raises nothing on links to the sender’s own site', () => {
    const a = analyzeUrls(hamNewsletter(), settings);
    expect(a.indicators).toEqual([]);
    expect(a.is_phishing).toBe(false);
  });

  it('flags a link to a bare IP address', () => {
    expect(types(html('<a href="http://192.0.2.10/login">Sign in</a>'))).toContain('ip_url');
  });

  it('does not flag a link to a private or loopback address (a device on a lab network)', () => {
    for (const host of ['10.10.0.100', '192.168.10.1', '127.0.0.1', '172.20.1.1', '[::1]'])
      expect(types(html(`<a href="http://${host}/">http://${host}/</a>`)), host).not.toContain(
        'ip_url',
      );
    expect(isNonRoutableIp('4.0.0.0')).toBe(true);
    expect(isNonRoutableIp('203.0.113.7')).toBe(false);
    expect(isNonRoutableIp('172.32.0.1')).toBe(false);
  });

  it('flags a punycode host', () => {
    expect(types(html('<a href="https://xn--pypal-4ve.com/">open</a>'))).toContain(
      'homograph_domain',
    );
  });

  it('flags a look-alike of a protected brand', () => {
    expect(types(html('<a href="https://paypal-secure-login.com/">open</a>'))).toContain(
      'lookalike_domain',
    );
  });

  it('flags a look-alike of the organisation’s domain', () => {
    const s = UrlsSettings.parse({ organisation_domains: ['acmecorp.com'] });
    expect(types(html('<a href="https://acmec0rp.com/reset">reset</a>'), s)).toContain(
      'internal_domain_lookalike',
    );
  });

  it('flags link text that shows a brand domain but points elsewhere', () => {
    const a = analyzeUrls(
      html('<a href="https://evil.example/x">https://www.paypal.com/signin</a>'),
      settings,
    );
    const i = a.indicators?.find((x) => x.type === 'link_text_mismatch');
    expect(i?.value).toContain('paypal.com');
  });

  it('flags URL shorteners', () => {
    expect(types(html('<a href="https://bit.ly/3abcd">click</a>'))).toContain('url_shortener');
  });

  it('flags risky TLDs', () => {
    expect(types(html('<a href="https://prize-center.top/claim">claim</a>'))).toContain(
      'risky_tld',
    );
  });

  it('flags a form that asks for a password', () => {
    const e = html(
      '<form action="https://collect.example/p" method="post"><input name="u"><input type="password" name="p"></form>',
    );
    expect(types(e)).toContain('credential_form');
  });

  it('flags javascript: links', () => {
    expect(types(html('<a href="javascript:alert(1)">open</a>'))).toContain('script_url');
  });

  it('flags a brand used in the subdomain of an unrelated domain', () => {
    expect(types(html('<a href="https://paypal.com.account-verify.example/">open</a>'))).toContain(
      'brand_impersonation',
    );
  });

  it('flags pages on shared hosting', () => {
    expect(
      types(html('<a href="https://storage.googleapis.com/bucket/index.html">open</a>')),
    ).toContain('suspicious_url');
  });

  it('never looks up anything: a message with 400 links answers quickly and bounded', () => {
    const links = Array.from(
      { length: 400 },
      (_, i) => `<a href="https://host${i}.example/p">l</a>`,
    ).join('');
    const a = analyzeUrls(html(links), settings);
    expect(a.indicators?.length ?? 0).toBeLessThanOrEqual(50);
  });
});

describe('look-alike helpers', () => {
  it('folds confusables', () => {
    expect(skeleton('paypa1')).toBe(skeleton('paypal'));
    expect(skeleton('rnicrosoft')).toBe(skeleton('microsoft'));
  });
  it('bounds the edit distance', () => {
    expect(editDistance('amazon', 'arnazon', 2)).toBe(2);
    expect(editDistance('abc', 'xyzxyz', 1)).toBe(2);
  });
  it('answers the first protected name that a domain imitates, and how', () => {
    const names = protectedNames(
      [
        {
          id: 'paypal',
          names: [],
          case_names: [],
          domains: ['paypal.com'],
          sends_for_anyone: false,
          source: 'test',
        },
        {
          id: 'amazon',
          names: [],
          case_names: [],
          domains: ['amazon.com', 'amazonpay.com'],
          sends_for_anyone: false,
          source: 'test',
        },
        {
          id: 'payp',
          names: [],
          case_names: [],
          domains: ['paypalsecure.net'],
          sends_for_anyone: false,
          source: 'test',
        },
        {
          id: 'facebook',
          names: [],
          case_names: [],
          domains: ['facebook.com'],
          sends_for_anyone: false,
          source: 'test',
        },
      ],
      [],
    );
    const how = (d: string) => {
      const hit = findLookalike(d, names);
      return hit && `${hit.owner}:${hit.how}`;
    };
    expect(how('paypai.com')).toBe('paypal:confusable');
    // one edit from a name of six letters or fewer lies many a real word: confusables only there
    expect(how('amazom.com')).toBeUndefined();
    expect(how('paypal-secure.com')).toBe('paypal:contains');
    expect(how('faceboook.com')).toBe('facebook:edit_distance');
    expect(how('pay-pal-login.com')).toBe('paypal:contains'); // the brand cut by a hyphen
    expect(how('secure-amazon-login.com')).toBe('amazon:contains');
    expect(how('paypalsecure.com')).toBe('paypal:contains'); // paypal comes first in the list
    // a domain one brand operates is nobody's look-alike, another brand's neither
    expect(how('paypalsecure.net')).toBeUndefined();
    expect(how('amazonpay.com')).toBeUndefined();
    expect(how('example.com')).toBeUndefined();
  });

  it('does not call a brand’s own domain a look-alike', () => {
    const names = protectedNames(
      [
        {
          id: 'paypal',
          names: [],
          case_names: [],
          domains: ['paypal.com'],
          sends_for_anyone: false,
          source: 'test',
        },
      ],
      [],
    );
    expect(findLookalike('paypal.com', names)).toBeUndefined();
    expect(findLookalike('paypa1.com', names)?.owner).toBe('paypal');
  });
});
