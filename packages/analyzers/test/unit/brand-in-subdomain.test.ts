import { parseRawEmail } from '@trawl/mail';
import { describe, expect, it } from 'vitest';
import { verdict } from '../fixtures/verdict.ts';

/** An HTML message from billing@shop.test with `body` as its HTML. */
function mail(body: string): Buffer {
  return Buffer.from(
    [
      'From: Shop <billing@shop.test>',
      'To: bob@example.org',
      'Subject: Your order',
      'Date: Mon, 6 May 2024 10:00:00 +0000',
      'Message-ID: <o1@shop.test>',
      'Content-Type: text/html; charset=utf-8',
      '',
      body,
      '',
    ].join('\r\n'),
  );
}

describe('a brand’s name in the subdomain of an unrelated domain (urls.brand_in_subdomain)', () => {
  it('counts where a click goes', async () => {
    const v = await verdict(
      await parseRawEmail(
        mail('<p>Order shipped. <a href="https://paypal.com.account-check.test/">Track</a></p>'),
        {},
      ),
    );
    expect(v.symbols).toContain('urls.brand_in_subdomain');
  });

  it('counts a URL written in plain text (clients make it a link)', async () => {
    const raw = Buffer.from(
      [
        'From: Shop <billing@shop.test>',
        'To: bob@example.org',
        'Subject: Your order',
        'Date: Mon, 6 May 2024 10:00:00 +0000',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'Order shipped. Track it at https://paypal.com.account-check.test/track',
        '',
      ].join('\r\n'),
    );
    expect((await verdict(await parseRawEmail(raw, {}))).symbols).toContain(
      'urls.brand_in_subdomain',
    );
  });

  it('not for an image: a CDN names its customers in subdomains', async () => {
    const v = await verdict(
      await parseRawEmail(
        mail(
          '<p>Order shipped. <img src="https://img-prod-cms-rt-microsoft-com.akamaized.net/logo.png"> <a href="https://shop.test/orders/1">Your order</a></p>',
        ),
        {},
      ),
    );
    expect(v.symbols).not.toContain('urls.brand_in_subdomain');
  });
});
