import type { Email, ServiceConfigFile } from '@trawl/contracts';
import { parseRawEmail } from '@trawl/mail';
import { describe, expect, it } from 'vitest';
import { makeEmail } from '../fixtures/emails.ts';
import { shippedConfig, verdict } from '../fixtures/verdict.ts';

/**
 * The classic techniques, each alone with a credential or payment request, judged by the default
 * workflow with the shipped configuration; and the legitimate look-alikes of each. Hand-written
 * messages: nothing here comes from a corpus.
 */
const cfg = shippedConfig;

function withOrganisation(service: ServiceConfigFile, domains: string[]): ServiceConfigFile {
  const analyzers = { ...service.analyzers };
  for (const id of ['headers', 'urls']) {
    const a = analyzers[id]!;
    analyzers[id] = { ...a, settings: { ...(a.settings ?? {}), organisation_domains: domains } };
  }
  return { ...service, analyzers };
}

const raw = (lines: string[]) => parseRawEmail(Buffer.from(lines.join('\r\n')), {});

const RECEIVED =
  'Received: from mail.sender.test (mail.sender.test [198.51.100.7]) by mx.example.org (Postfix) with ESMTPS id 4F1; Mon, 6 May 2024 10:00:00 +0000';

describe('phishing techniques, each alone with a request', () => {
  it('a login link to a bare IP address', async () => {
    const e = makeEmail({
      from: 'Account Services <service@accounts-mail.test>',
      to: ['bob@example.org'],
      subject: 'Your account',
      html: '<p>We noticed a problem. Please <a href="http://203.0.113.45/secure/login.php">sign in to your account</a> and verify your account.</p>',
    });
    expect((await verdict(e)).phishing).toBe(true);
  });

  it('a look-alike of a brand: the paypa1 example', async () => {
    const e = makeEmail({
      from: 'billing@paypa1-security.com',
      subject: 'Billing',
      text: 'Your account will be suspended. Verify now at http://paypa1-security.com/login',
    });
    expect((await verdict(e)).phishing).toBe(true);
  });

  it('a look-alike of the organisation’s own domain', async () => {
    const e = makeEmail({
      from: 'IT Service <it@examp1e.org>',
      to: ['bob@example.org'],
      subject: 'Password policy',
      text: 'Please reset your password today at https://examp1e.org/reset to keep your account.',
    });
    const service = withOrganisation(cfg.service, ['example.org']);
    expect((await verdict(e, service)).phishing).toBe(true);
  });

  it('link text that shows one domain and points to another', async () => {
    const e = makeEmail({
      from: 'Notifications <notice@mailer-notify.test>',
      to: ['bob@example.org'],
      subject: 'Statement',
      html: '<p>Please log in to review your statement: <a href="http://secure-session.test/x">https://www.wellsfargo.com/login</a></p>',
    });
    expect((await verdict(e)).phishing).toBe(true);
  });

  it('a brand display name from an unrelated domain', async () => {
    const e = makeEmail({
      from: '"Microsoft 365" <support@office-alerts.test>',
      to: ['bob@example.org'],
      subject: 'Mailbox',
      html: '<p>Confirm your password to keep your account: <a href="https://portal-office.test/auth">Keep my password</a></p>',
    });
    expect((await verdict(e)).phishing).toBe(true);
  });
});

describe('legitimate mail that looks like what phishing imitates', () => {
  it('a list reply rewritten by Mailman (From via the list, Reply-To the author’s free-mail)', async () => {
    const e = await raw([
      RECEIVED,
      'Return-Path: <users-bounces@lists.project.test>',
      'From: "Jane Doe via Users" <users@lists.project.test>',
      'Reply-To: Jane Doe <jane.doe1987@gmail.com>',
      'To: users@lists.project.test',
      'Subject: Re: [Users] build fails on arm64',
      'Message-ID: <abc.123@mail.gmail.com>',
      'In-Reply-To: <xyz.789@mail.example.net>',
      'References: <xyz.789@mail.example.net>',
      'List-Id: Project users <users.lists.project.test>',
      'List-Post: <mailto:users@lists.project.test>',
      'List-Unsubscribe: <https://lists.project.test/mailman/options/users>',
      'Sender: "Users" <users-bounces@lists.project.test>',
      'Date: Mon, 6 May 2024 09:59:00 +0000',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'You need to pass -DENABLE_NEON=OFF, see https://github.com/project/issues/42 for details.',
      '',
    ]);
    const v = await verdict(e);
    expect(v.phishing).toBe(false);
  });

  it('a list reply relayed with the author’s From, re-signed by the list (author DKIM and DMARC broken)', async () => {
    const e = await raw([
      'Authentication-Results: mx.example.org; dkim=pass header.d=lists.project.test header.s=s1; dkim=fail ("body hash did not verify") header.d=gmail.com; dmarc=fail header.from=gmail.com (policy=none)',
      RECEIVED,
      'DKIM-Signature: v=1; a=rsa-sha256; d=lists.project.test; s=s1; h=From:Subject:Date:List-Id:List-Post; bh=x; b=y',
      'DKIM-Signature: v=1; a=rsa-sha256; d=gmail.com; s=20230601; h=from:to:subject:date; bh=x; b=y',
      'From: Jane Doe <jane.doe1987@gmail.com>',
      'To: users@lists.project.test',
      'Subject: Re: [Users] build fails on arm64',
      'Message-ID: <abc.124@mail.gmail.com>',
      'In-Reply-To: <xyz.790@mail.example.net>',
      'List-Id: Project users <users.lists.project.test>',
      'List-Post: <mailto:users@lists.project.test>',
      'Date: Mon, 6 May 2024 09:59:00 +0000',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Same here with 4.6, the log says the device at http://192.168.10.2/ did not answer.',
      '',
    ]);
    const v = await verdict(e);
    expect(v.phishing).toBe(false);
    expect(v.symbols).toContain('headers.list_explains_auth_failure');
    expect(v.symbols).not.toContain('urls.ip_url');
  });

  it('a newsletter with an unsubscribe link', async () => {
    const e = makeEmail({
      from: 'Weekly Digest <news@digest.example.com>',
      to: ['bob@example.org'],
      subject: 'This week: five articles on distributed systems',
      html: '<p>Hello, here are this week’s articles.</p><p><a href="https://digest.example.com/a/1">Consensus in practice</a></p><p><a href="https://digest.example.com/unsubscribe?u=bob%40example.org">Unsubscribe</a></p>',
      headers: { 'list-unsubscribe': '<https://digest.example.com/unsubscribe?u=1>' },
    });
    expect((await verdict(e)).phishing).toBe(false);
  });

  it('a password-reset mail from a DMARC-aligned brand sender', async () => {
    const e = await raw([
      'Authentication-Results: mx.example.org; spf=pass smtp.mailfrom=accountprotection.microsoft.com; dkim=pass header.d=accountprotection.microsoft.com; dmarc=pass header.from=accountprotection.microsoft.com',
      RECEIVED,
      'From: Microsoft account team <account-security-noreply@accountprotection.microsoft.com>',
      'To: bob@example.org',
      'Subject: Microsoft account password reset',
      'Message-ID: <reset.1@accountprotection.microsoft.com>',
      'Date: Mon, 6 May 2024 09:59:00 +0000',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Please use this code to reset the password for your Microsoft account. Security code: 492113.</p><p>If you didn’t request this, you can <a href="https://account.live.com/reset">review your account</a>.</p>',
      '',
    ]);
    const v = await verdict(e);
    expect(v.phishing).toBe(false);
    expect(v.symbols).toContain('headers.dmarc_pass_brand_domain');
  });
});

describe('a brand’s own alert, every link to the brand, without authentication results', () => {
  const alert = (href: string) =>
    makeEmail({
      from: '"Bank of America" <onlinebanking@ealerts.bankofamerica.com>',
      to: ['bob@example.org'],
      subject: 'Security alert: new sign-in to your account',
      html: `<p>Dear Bob,</p><p>We noticed a new sign-in to your Online Banking account from a new device. If you do not recognize this activity, please sign in at <a href="${href}">bankofamerica.com</a> and change your password immediately, or your account may be restricted.</p>`,
    });
  it('is not phishing when every link goes to the brand', async () => {
    const v = await verdict(alert('https://secure.bankofamerica.com/login/sign-in'));
    expect(v.phishing).toBe(false);
    expect(v.symbols).toContain('content.brand_links_explain_request');
  });
  it('is phishing when its link is an open redirect on the brand’s domain', async () => {
    const v = await verdict(
      alert('https://www.bankofamerica.com/redirect?url=http://secure-login.test/sign-in'),
    );
    expect(v.symbols).not.toContain('content.brand_links_explain_request');
  });
  it('is phishing when the same text links anywhere else', async () => {
    const v = await verdict(alert('http://bankofamerica.secure-login.test/sign-in'));
    expect(v.phishing).toBe(true);
    expect(v.symbols).not.toContain('content.brand_links_explain_request');
  });
});

describe('evasion: a forgeable header or an authenticated look-alike does not clear phishing', () => {
  const lure = [
    'From: "PayPal" <service@paypa1-secure.test>',
    'To: bob@example.org',
    'Subject: Your account has been limited',
    'Message-ID: <1@paypa1-secure.test>',
    'Date: Mon, 6 May 2024 09:59:00 +0000',
    'Content-Type: text/html; charset=utf-8',
  ];
  const body = [
    '',
    '<p>Your account will be suspended. Verify your account now: <a href="http://198.51.100.23/webscr/login">https://www.paypal.com/signin</a></p>',
    '',
  ];

  it('the lure alone is phishing', async () => {
    expect((await verdict(await raw([RECEIVED, ...lure, ...body]))).phishing).toBe(true);
  });

  it('with List-Id, List-Post and a Reply-To added', async () => {
    const e = await raw([
      RECEIVED,
      ...lure,
      'List-Id: <offers.paypa1-secure.test>',
      'List-Post: <mailto:service@paypa1-secure.test>',
      'Reply-To: PayPal Support <paypal.support.desk@gmail.com>',
      ...body,
    ]);
    expect((await verdict(e)).phishing).toBe(true);
  });

  it('with List-Id and a DKIM signature of its own covering it, spoofing the brand’s domain', async () => {
    const e = await raw([
      'Authentication-Results: mx.example.org; dkim=pass header.d=paypa1-secure.test; dmarc=fail header.from=paypal.com',
      RECEIVED,
      'DKIM-Signature: v=1; a=rsa-sha256; d=paypa1-secure.test; s=s1; h=From:Subject:List-Id; bh=x; b=y',
      ...lure.map((l) => (l.startsWith('From:') ? 'From: "PayPal" <service@paypal.com>' : l)),
      'List-Id: <offers.paypa1-secure.test>',
      ...body,
    ]);
    const v = await verdict(e);
    expect(v.phishing).toBe(true);
    expect(v.symbols).not.toContain('headers.list_explains_auth_failure');
  });

  it('posing as a reply in a thread (Re:, In-Reply-To, References)', async () => {
    const e = await raw([
      RECEIVED,
      ...lure.map((l) => (l.startsWith('Subject:') ? 'Subject: Re: Your account' : l)),
      'In-Reply-To: <prior.1@example.org>',
      'References: <prior.1@example.org>',
      ...body,
    ]);
    expect((await verdict(e)).phishing).toBe(true);
  });

  it('sent from a freshly registered look-alike domain that passes DMARC', async () => {
    const e = await raw([
      'Authentication-Results: mx.example.org; spf=pass smtp.mailfrom=paypa1-secure.test; dkim=pass header.d=paypa1-secure.test; dmarc=pass header.from=paypa1-secure.test',
      RECEIVED,
      ...lure,
      ...body,
    ]);
    expect((await verdict(e)).phishing).toBe(true);
  });

  it('with a forged passing Authentication-Results for the brand written below the receiver', async () => {
    const e = await raw([
      RECEIVED,
      'Authentication-Results: mx.paypal.com; dkim=pass header.d=paypal.com; dmarc=pass header.from=paypal.com',
      ...lure.map((l) => (l.startsWith('From:') ? 'From: "PayPal" <service@paypal.com>' : l)),
      ...body,
    ]);
    const v = await verdict(e);
    expect(v.phishing).toBe(true);
    expect(v.symbols).not.toContain('headers.dmarc_pass_brand_domain');
  });
});

describe('older phishing: a form in the message', () => {
  it('asking for card and PIN numbers without a password field', async () => {
    const e = makeEmail({
      from: '"Bank Security" <security@bank-alerts.test>',
      to: ['bob@example.org'],
      subject: 'Account update',
      html: '<p>Please confirm your account details below.</p><form action="http://198.51.100.9/cgi-bin/update.php" method="post"><input name="cardnumber"><input name="exp_month"><input name="pin"><input type="submit"></form>',
    });
    expect((await verdict(e)).phishing).toBe(true);
  });
});

describe('older phishing: the lure is an image map', () => {
  it('one image whose only area links to a brand name under another domain', async () => {
    const e = makeEmail({
      from: '"Bank of America" <alert@bankofamerica.com>',
      to: ['bob@example.org'],
      subject: 'Online Banking Suspension',
      html: '<img src="http://www.bankofamerica.com/images/alert.gif" usemap="#m"><map name="m"><area shape="rect" coords="0,0,600,400" href="http://bankofamerica.com.secure-verify.test/sas/signon.do"></map>',
    });
    const v = await verdict(e);
    expect(v.phishing).toBe(true);
    expect(v.symbols).toContain('content.image_only');
  });
});

describe('older phishing: links that disguise where they go', () => {
  const lure = (href: string, extra = '') =>
    makeEmail({
      from: '"Support" <support@mybank-alerts.test>',
      to: ['bob@example.org'],
      subject: 'Account notice',
      html: `<p>Your account access has been limited. Please sign in to restore it.</p><p><a href="${href}"${extra}>Sign in to your account</a></p>`,
    });
  it('a host written with %-escapes', async () => {
    const v = await verdict(lure('http://%77%77%77.%65%78%61%6d%70%6c%65.test/login'));
    expect(v.phishing).toBe(true);
    expect(v.symbols).toContain('urls.encoded_host');
  });
  it('an IP address written as one number', async () => {
    const v = await verdict(lure('http://3512041827/login/'));
    expect(v.phishing).toBe(true);
    expect(v.symbols).toContain('urls.encoded_host');
  });
  it('the status bar rewritten on hover (window.status)', async () => {
    const v = await verdict(
      lure(
        'http://login-restore.test/x',
        ` onmouseover="window.status='https://www.paypal.com/';return true"`,
      ),
    );
    expect(v.phishing).toBe(true);
    expect(v.symbols).toContain('urls.status_bar_spoof');
  });
});

describe('older phishing: the brand’s own domain spoofed in From', () => {
  it('asking to confirm the account with no link to the brand', async () => {
    const e = makeEmail({
      from: '"PayPal" <service@paypal.com>',
      to: ['bob@example.org'],
      subject: 'Account review',
      html: '<p>Dear PayPal member, we were unable to verify your account information. Please <a href="http://account-review-center.test/webscr">confirm your account</a> within 48 hours or your access will be suspended.</p>',
    });
    const v = await verdict(e);
    expect(v.phishing).toBe(true);
    expect(v.symbols).toContain('content.brand_sender_offsite_links');
  });
});

describe('older phishing: a plain-text message from the brand’s own domain', () => {
  it('asking to confirm the account at a link that is not the brand’s', async () => {
    const e = makeEmail({
      from: 'service@paypal.com',
      to: ['bob@example.org'],
      subject: 'PayPal account',
      text: 'Dear PayPal user,\nplease confirm your account information at http://paypal-secure.account-confirm.test/\nPayPal',
    });
    const v = await verdict(e);
    expect(v.phishing).toBe(true);
    expect(v.symbols).toContain('content.brand_sender_offsite_links');
  });
});

describe('a sign-in page pre-filled for the target', () => {
  it('the recipient’s address in the link’s fragment, with a mailbox lure', async () => {
    const e = makeEmail({
      from: 'Mail Notification <notify@relay-mailer.test>',
      to: ['bob@example.org'],
      subject: 'Incoming messages on hold',
      html: '<p>You have 4 pending messages. <a href="https://storage-view.test/owa/#Ym9iQGV4YW1wbGUub3Jn">Release messages</a></p>',
    });
    const v = await verdict(e);
    expect(v.symbols).toContain('urls.recipient_in_fragment');
    expect(v.phishing).toBe(true);
  });

  it('a newsletter whose unsubscribe link carries the address in its query is not that', async () => {
    const e = makeEmail({
      from: 'Weekly Digest <news@digest.example.com>',
      to: ['bob@example.org'],
      subject: 'This week: five articles',
      html: '<p>Articles.</p><a href="https://digest.example.com/unsubscribe?email=bob%40example.org">Unsubscribe</a>',
    });
    const v = await verdict(e);
    expect(v.symbols ?? []).not.toContain('urls.recipient_in_fragment');
    expect(v.phishing).toBe(false);
  });
});

describe('call-back fraud: a charge with a number to call', () => {
  it('a security-software renewal from a free-mail address, no link, a number to dispute it', async () => {
    const e = makeEmail({
      from: 'Billing Desk <renewals.desk2291@gmail.com>',
      to: ['bob@example.org'],
      subject: 'Invoice 4471 confirmation',
      text: 'Hello,\nyour Norton 360 Total Protection subscription has been renewed. Amount charged: $399.99 to your card on file.\nIf you did not authorize this charge, call our billing team at +1 (808) 374-4981 within 24 hours.\nThank you.',
    });
    const v = await verdict(e);
    expect(v.phishing).toBe(true);
    expect(v.symbols).toContain('content.callback_lure');
  });

  it('a shop’s own receipt that links to the shop is not one', async () => {
    const e = makeEmail({
      from: 'Example Shop <orders@shop.example.com>',
      to: ['bob@example.org'],
      subject: 'Your order confirmation',
      html: '<p>Thank you for your purchase. Total paid: $45.00.</p><p>Track it at <a href="https://shop.example.com/orders/1234">your orders</a>. Questions? Call us at (555) 201-4433.</p>',
    });
    const v = await verdict(e);
    expect(v.phishing).toBe(false);
    expect(v.symbols ?? []).not.toContain('content.callback_lure');
  });

  it('a colleague’s signature with a phone number and no charge is not one', async () => {
    const e = makeEmail({
      from: 'Jane Doe <jane.doe1987@gmail.com>',
      to: ['bob@example.org'],
      subject: 'Re: meeting notes',
      text: 'Thanks, the notes look right to me. The venue costs $200 for the day.\n\nJane\nMobile: +1 (617) 555-0199',
      headers: { 'in-reply-to': '<notes.1@example.org>' },
    });
    const v = await verdict(e);
    expect(v.symbols ?? []).not.toContain('content.callback_lure');
  });
});

describe('call-back fraud with a national toll-free number', () => {
  it('a charge "under review" with an 0800 number from free mail is a call-back lure', async () => {
    const e = makeEmail({
      from: 'Suporte <suporte.cartao7731@gmail.com>',
      to: ['bob@example.org'],
      subject: 'Aviso importante',
      text: 'Alerta: transação em análise no valor de R$1.599,99 no dia 28/02. Caso não reconheça, ligue para a área de segurança: 0800-400-8033.',
    });
    const v = await verdict(e);
    expect(v.symbols).toContain('content.callback_lure');
  });

  it('a date, an order number or a run of digits starting 0800 is no number to call', async () => {
    const e = makeEmail({
      from: 'Suporte <suporte.cartao7731@gmail.com>',
      to: ['bob@example.org'],
      subject: 'Pedido',
      text: 'Compra aprovada no valor de R$ 59,90. Pedido 08004008033, protocolo 0800/2024.',
    });
    const v = await verdict(e);
    expect(v.symbols ?? []).not.toContain('content.callback_lure');
  });
});

describe('every link leaves the sender without showing where (content.hidden_offsite_links)', () => {
  const offsite = 'content.hidden_offsite_links';
  const from = 'Eco Savings <news@example.com>';
  it('an organisation’s mail whose every "click here" goes to another domain', async () => {
    const e = makeEmail({
      from,
      html: '<p>Cut your energy bill. <a href="https://example.net/c?id=9">Click here</a></p>',
    });
    expect((await verdict(e)).symbols).toContain(offsite);
  });

  it('not when a link goes to the sender’s own site, its signer’s, or its account at a mail service', async () => {
    const own = makeEmail({
      from,
      html: '<a href="https://example.net/c">Offer</a> <a href="https://www.example.com/about">About us</a>',
    });
    expect((await verdict(own)).symbols ?? []).not.toContain(offsite);
    const account = makeEmail({
      from,
      html: '<a href="https://example.us5.list-manage.com/track?u=1">Read more</a>',
    });
    expect((await verdict(account)).symbols ?? []).not.toContain(offsite);
  });

  it('a brand’s mail may link to any of the brand’s domains; its spoof linking elsewhere may not', async () => {
    const own = makeEmail({
      from: 'PayPal <service@paypal.de>',
      html: '<p>Ihre Zahlung ist eingegangen. <a href="https://www.paypal.com/activity">Details</a></p>',
    });
    expect((await verdict(own)).symbols ?? []).not.toContain(offsite);
    const spoof = makeEmail({
      from: 'PayPal <service@paypal.de>',
      html: '<p>Ihre Zahlung ist eingegangen. <a href="https://example.net/activity">Details</a></p>',
    });
    expect((await verdict(spoof)).symbols).toContain(offsite);
  });

  it('not when each link shows its domain, nor from free mail, nor for a style sheet', async () => {
    const shown = makeEmail({
      from,
      html: '<p>Our new paper: <a href="https://example.org/p/42">example.org/p/42</a></p>',
    });
    expect((await verdict(shown)).symbols ?? []).not.toContain(offsite);
    const person = makeEmail({
      from: 'Jane <jane.doe1987@gmail.com>',
      html: '<p>The photos are <a href="https://example.net/album/1">here</a>.</p>',
    });
    expect((await verdict(person)).symbols ?? []).not.toContain(offsite);
    const sheet = makeEmail({
      from,
      html: '<link rel="stylesheet" href="https://example.net/css"><p>Minutes attached.</p>',
    });
    expect((await verdict(sheet)).symbols ?? []).not.toContain(offsite);
  });
});

describe('a link to the sender’s own site is the sender’s only when its domain signed', () => {
  const offsite = 'content.hidden_offsite_links';
  const mail = (auth: string, dkim: string) =>
    raw([
      ...(auth ? [`Authentication-Results: mx.example.org; ${auth}`] : []),
      RECEIVED,
      'From: Eco Savings <news@example.com>',
      'To: bob@example.org',
      'Subject: Cut your energy bill',
      'Message-ID: <n1@example.com>',
      'Date: Mon, 6 May 2024 09:59:00 +0000',
      ...(dkim
        ? [`DKIM-Signature: v=1; a=rsa-sha256; d=${dkim}; s=s1; h=From:Subject; bh=x; b=y`]
        : []),
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Save now: <a href="https://example.net/c?id=9">click here</a>. <a href="https://example.com/">example.com</a></p>',
    ]);

  it('an unsigned sender’s link to its own domain does not clear its other links', async () => {
    const e = await mail('spf=pass smtp.mailfrom=example.com; dkim=none; dmarc=none', '');
    expect((await verdict(e)).symbols).toContain(offsite);
  });

  it('a signed sender’s does, and so does any where no DKIM result was recorded', async () => {
    const signed = await mail('dkim=pass header.d=example.com; dmarc=pass', 'example.com');
    expect((await verdict(signed)).symbols ?? []).not.toContain(offsite);
    for (const auth of ['', 'spf=pass smtp.mailfrom=example.com']) {
      const unchecked = await mail(auth, '');
      expect((await verdict(unchecked)).symbols ?? [], auth).not.toContain(offsite);
    }
  });
});

describe('an unsubscribe link that is someone else’s (content.foreign_newsletter)', () => {
  const foreign = 'content.foreign_newsletter';
  const news = (from: string, unsubscribe: string, checked = true) =>
    raw([
      ...(checked
        ? ['Authentication-Results: mx.example.org; spf=pass; dkim=none; dmarc=none']
        : []),
      RECEIVED,
      `From: ${from}`,
      'To: bob@example.org',
      'Subject: This week',
      'Message-ID: <n2@mail.sender.test>',
      'Date: Mon, 6 May 2024 09:59:00 +0000',
      'Content-Type: text/html; charset=utf-8',
      '',
      `<p>This week’s best radio.</p><p><a href="https://newsletters.broadcaster.test/v/1">View in browser</a> <a href="${unsubscribe}">Unsubscribe</a></p>`,
    ]);
  const symbols = async (e: Promise<Email>) => (await verdict(await e)).symbols ?? [];

  it('a newsletter whose unsubscribe link goes to an unrelated domain, from a sender that did not sign', async () => {
    const from = 'Eco Solutions <promo@sc1jacq.universe.test>';
    expect(await symbols(news(from, 'https://newsletters.broadcaster.test/u/9'))).toContain(
      foreign,
    );
    const warranty = 'Home Warranty <renew@zhishang.test>';
    expect(await symbols(news(warranty, 'mailto:replyto@other-shop.test'))).toContain(foreign);
  });

  it('not where the receiving hop recorded no authentication: "did not sign" is unknown there', async () => {
    const e = news(
      'Eco Solutions <promo@sc1jacq.universe.test>',
      'https://x.broadcaster.test/u',
      false,
    );
    expect(await symbols(e)).not.toContain(foreign);
  });

  it('not at the sender’s domain, its account at a mail service, or from free mail', async () => {
    for (const [from, link] of [
      ['Shop <news@shop.test>', 'https://www.shop.test/unsubscribe'],
      ['Shop <news@shop.test>', 'https://shop.us5.list-manage.com/unsubscribe?u=1'],
      ['Jane <jane.doe1987@gmail.com>', 'https://newsletters.broadcaster.test/u/9'],
    ] as const)
      expect(await symbols(news(from, link)), from).not.toContain(foreign);
  });
});

describe('a bank’s or a carrier’s name on a domain that is not theirs', () => {
  it('a bank no list names, on an unrelated domain, asking to confirm', async () => {
    const e = makeEmail({
      from: 'Norrland Savings Bank <kundservice@mail-notice.test>',
      to: ['bob@example.org'],
      subject: 'Ihr Zertifikat läuft ab',
      html: '<p>Dear customer, your security certificate expires. <a href="https://cert-renew.test/login">Confirm your account</a> now.</p>',
    });
    const v = await verdict(e);
    expect(v.phishing).toBe(true);
    expect(v.symbols).toContain('headers.display_name_institution');
  });

  it('a bank at its own domain or its initials is not flagged', async () => {
    for (const from of [
      'Banco do Brasil <noreply@bb.com.br>',
      'Chase Bank <no-reply@alerts.chase.com>',
      'Norrland Savings Bank <service@norrlandsavings.test>',
      'Kurier <newsletter@kurier.at>',
      'The Daily Courier <news@dcourier.test>',
    ]) {
      const e = makeEmail({
        from,
        to: ['bob@example.org'],
        subject: 'Your statement is ready',
        text: 'Your monthly statement is available in online banking.',
      });
      expect((await verdict(e)).symbols ?? []).not.toContain('headers.display_name_institution');
    }
  });
});

describe('a random token appended to the subject so no two copies match', () => {
  it('lower-case letters and digits drawn at random', async () => {
    const e = makeEmail({
      from: 'Customer Service <billing@invoices-center.test>',
      to: ['bob@example.org'],
      subject: 'Reminder: Customer Payment Needed #oo2oyj6dku6kdhekfc84exnta',
      text: 'Your payment failed. Update your billing information to avoid interruption.',
    });
    expect((await verdict(e)).symbols).toContain('headers.junk_suffix');
  });

  it('a commit hash or a ticket number is not one', async () => {
    for (const subject of [
      'Re: build broken at 3f2a9c1d8e7b6a5f4c3d2e1f',
      'Your ticket #1029384756 was updated',
    ]) {
      const e = makeEmail({
        from: 'CI <ci@build.example.com>',
        to: ['bob@example.org'],
        subject,
        text: 'See the log.',
      });
      expect((await verdict(e)).symbols ?? []).not.toContain('headers.junk_suffix');
    }
  });
});

describe('older phishing: a bank no list names, spoofed in its own From', () => {
  it('asks to verify the account at a link that is not the bank’s', async () => {
    const e = makeEmail({
      from: 'North Shore Savings <service@northshoresavingsbank.test>',
      to: ['bob@example.org'],
      subject: 'Account verification',
      html: '<p>Dear customer, we could not verify your account information. Please <a href="http://account-review.example.net/northshore/login.php">verify your account</a> to avoid suspension.</p>',
    });
    const v = await verdict(e);
    expect(v.symbols).toContain('content.institution_sender_offsite_links');
    expect(v.phishing).toBe(true);
  });

  it('the bank’s own notice, linking to its own site, is not it', async () => {
    const e = makeEmail({
      from: 'North Shore Savings <service@northshoresavingsbank.test>',
      to: ['bob@example.org'],
      subject: 'Your statement',
      html: '<p>Your statement is ready. <a href="https://www.northshoresavingsbank.test/online">Sign in to your account</a> to view it.</p>',
    });
    const v = await verdict(e);
    expect(v.symbols ?? []).not.toContain('content.institution_sender_offsite_links');
    expect(v.phishing).toBe(false);
  });
});
