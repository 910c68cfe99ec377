import { findRepoRoot } from '@trawl/config';
import type { Email } from '@trawl/contracts';
import { parseRawEmail } from '@trawl/mail';
import { compileWorkflow, runWorkflow } from '@trawl/workflow-engine';
import { describe, expect, it } from 'vitest';
import { FORGERIES, type Forgery, forge } from '../../src/eval/forgeries.ts';
import { inProcessDeps } from '../../src/eval/in-process-invoker.ts';
import { loadEvalConfig } from '../../src/eval/load-config.ts';
import { builtinAnalyzers } from '../../src/registry.ts';

/**
 * Every negative or explaining symbol, attacked: each hand-written phishing message below is judged
 * as sent and once per forgery an attacker can write (eval/forgeries.ts: list headers of another
 * domain or of his own, a thread, an X-Mailer, Authentication-Results below the receiving hop, an
 * ARC set his own relay sealed and the receiver found valid, a report structure, a Sender, a
 * Reply-To to the address his display name shows, a link to his From domain's own site). No
 * forgery may lower the probability. The receiver here records DKIM results (a link to the
 * sender's own site is believed where it records none: the documented `own_link` residual). Nothing
 * here comes from a corpus; forged-headers-corpus.test.ts runs the same on the shared corpora.
 */
const root = findRepoRoot();
const cfg = loadEvalConfig(root, {
  service: `${root}/config/defaults/service.yaml`,
  workflows: `${root}/config/defaults/workflows.yaml`,
});
const wf = compileWorkflow(cfg.workflows.find((w) => w.id === 'default')!);
const deps = {
  ...inProcessDeps(builtinAnalyzers, cfg.service),
  thresholds: cfg.service.verdict.thresholds,
  defaultAnalyzerTimeoutMs: cfg.service.analyzer.timeout_ms,
};

async function probability(raw: Buffer): Promise<{ p: number; symbols: string[] }> {
  const email: Email = await parseRawEmail(raw, {});
  const out = await runWorkflow(wf, email, deps);
  if (out.status !== 'completed') throw new Error(`workflow ${out.status}`);
  const scorer = out.context.score?.analyzers.scorer;
  const p = out.result.is_phishing ? out.result.confidence : 1 - out.result.confidence;
  return { p, symbols: (scorer?.analyzer_details?.symbols as string[] | undefined) ?? [] };
}

const RX =
  'Received: from mail.sender.test ([198.51.100.7]) by mx.example.org (Postfix); Mon, 6 May 2024 10:00:00 +0000';

const msg = (lines: string[]) => Buffer.from(`${lines.join('\r\n')}\r\n`);

/** Phishing messages, each leaning on what one explaining symbol could take away. */
const PHISHING: Record<string, Buffer> = {
  // a spoof of a brand's real domain failing DMARC at the receiver (ARC, list re-signing)
  brand_spoof: msg([
    'Authentication-Results: mx.example.org; spf=fail smtp.mailfrom=paypal.com; dkim=none; dmarc=fail header.from=paypal.com',
    RX,
    'From: PayPal <service@paypal.com>',
    'To: bob@example.org',
    'Subject: Your account has been limited',
    'Message-ID: <a1@mail.sender.test>',
    'Date: Mon, 6 May 2024 10:00:00 +0000',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Dear customer, unusual activity was detected. Verify your account within 24 hours at <a href="http://paypal-resolution-center.test/login">paypal.com</a> or it will be suspended.</p>',
  ]),
  // replies to free-mail from an organisation's domain (list rewriting, on-behalf senders)
  reply_elsewhere: msg([
    'Authentication-Results: mx.example.org; spf=pass smtp.mailfrom=supplier.test; dkim=pass header.d=supplier.test; dmarc=pass header.from=supplier.test',
    RX,
    'Return-Path: <accounts@supplier.test>',
    'From: "Accounts (billing@supplier.test)" <accounts@supplier.test>',
    'Reply-To: accounts.supplier@gmail.com',
    'To: bob@example.org',
    'Subject: Urgent: new bank details for invoice 4471',
    'Message-ID: <a2@supplier.test>',
    'Date: Mon, 6 May 2024 10:00:00 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello, our bank details have changed. Please settle the outstanding invoice by wire transfer to the new account today, and confirm by reply.',
  ]),
  // HTML alone, with mailbox-quota wording (list and bulk exemptions, report wording)
  fake_bounce: msg([
    'Authentication-Results: mx.example.org; spf=softfail smtp.mailfrom=mailer.test; dkim=none',
    RX,
    'Return-Path: <postmaster@mailer.test>',
    'From: "Mail Delivery System" <postmaster@mailer.test>',
    'To: bob@example.org',
    'Subject: Undelivered Mail: 5 messages could not be delivered',
    'Message-ID: <a3@mailer.test>',
    'Date: Mon, 6 May 2024 10:00:00 +0000',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Your mailbox is full. 5 incoming messages could not be delivered and are on hold. <a href="https://mail-release.test/login?u=bob@example.org">Release your pending messages</a> and sign in to upgrade your storage.</p>',
  ]),
  // a fake bounce beside a mail vendor’s help page, its lure on the vendor’s host anyone publishes on
  fake_bounce_vendor_link: msg([
    'Authentication-Results: mx.example.org; spf=pass smtp.mailfrom=mailer.test; dkim=none',
    RX,
    'Return-Path: <postmaster@mailer.test>',
    'From: "Microsoft Outlook" <postmaster@mailer.test>',
    'To: bob@example.org',
    'Subject: Undeliverable: 5 messages could not be delivered',
    'Message-ID: <a4@mailer.test>',
    'Date: Mon, 6 May 2024 10:00:00 +0000',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Your mailbox is full. 5 incoming messages could not be delivered and are on hold. <a href="https://mailhelp-my.sharepoint.com/:b:/g/personal/desk/EaBc12">Release your pending messages</a> and sign in to upgrade your storage. See <a href="https://go.microsoft.com/fwlink/?LinkId=389361">this article</a>.</p>',
  ]),
  // a decoy link to a brand's own page, the lure in an attached page
  decoy_brand_link: msg([
    'Authentication-Results: mx.example.org; spf=pass smtp.mailfrom=invoices.test; dkim=none',
    RX,
    'Return-Path: <billing@invoices.test>',
    'From: "Billing" <billing@invoices.test>',
    'To: bob@example.org',
    'Subject: Invoice 4471 overdue',
    'Message-ID: <a5@invoices.test>',
    'Date: Mon, 6 May 2024 10:00:00 +0000',
    'Content-Type: multipart/mixed; boundary="m"',
    '',
    '--m',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Your invoice is overdue. Open the attached statement and sign in to pay it today. Questions? <a href="https://go.microsoft.com/fwlink/?LinkId=521839">Help</a></p>',
    '--m',
    'Content-Type: text/html; name="statement.html"',
    'Content-Disposition: attachment; filename="statement.html"',
    '',
    '<form action="https://pay-statement.test/p"><input type="password" name="p"></form>',
    '--m--',
  ]),
};

describe('what an attacker can write never lowers the score of phishing', () => {
  for (const [name, raw] of Object.entries(PHISHING)) {
    it(`${name}: is phishing, and stays as likely whatever is forged`, async () => {
      const asSent = await probability(raw);
      expect(asSent.p, `${name} as sent`).toBeGreaterThanOrEqual(0.5);
      const fromNull = await probability(forge('null_sender', raw));
      for (const f of FORGERIES) {
        if (f === 'null_sender') continue;
        const forged = await probability(forge(f, raw));
        // a report comes from the null sender: judged against the same message sent from there
        const base = f === 'report' ? fromNull : asSent;
        expect(
          forged.p,
          `${name} + ${f}: ${base.symbols.join(' ')} → ${forged.symbols.join(' ')}`,
        ).toBeGreaterThanOrEqual(base.p - 1e-9);
      }
    });
  }

  it('own_link adds the link to every text part, written back in its own encoding', async () => {
    const raw = msg([
      'From: Billing <billing@shop.test>',
      'To: bob@example.org',
      'Subject: Invoice',
      'Date: Mon, 6 May 2024 10:00:00 +0000',
      'Content-Type: multipart/mixed; boundary="outer"',
      '',
      '--outer',
      'Content-Type: multipart/alternative; boundary="alt"',
      '',
      '--alt',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('Pay the invoice at https://pay.example.net/i/1\r\n').toString('base64'),
      '--alt',
      'Content-Type: text/html; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      '<html><body><a href=3D"https://pay.example.net/i/1">Pay now</a></body></html>',
      '--alt--',
      '--outer',
      'Content-Type: text/plain; name="notes.txt"',
      'Content-Disposition: attachment; filename="notes.txt"',
      '',
      'kept as it is',
      '--outer--',
    ]);
    const email = await parseRawEmail(forge('own_link', raw), {});
    expect(email.body_text).toContain('https://shop.test/');
    expect(email.body_html).toContain('<a href="https://shop.test/">shop.test</a>');
    expect(email.body_html).toContain('<a href="https://pay.example.net/i/1">Pay now</a>');
    expect(forge('own_link', raw).toString('latin1')).toContain('\r\nkept as it is\r\n');
  });

  it('each forgery changes the message as it says (the test above tests something)', () => {
    const raw = PHISHING.brand_spoof!;
    const text = (f: Forgery) => forge(f, raw).toString('latin1');
    expect(text('list')).toContain('List-Id: Announcements <announce.lists.example.net>');
    expect(text('list_own')).toContain('List-Post: <mailto:service@paypal.com>');
    expect(text('thread')).toContain('Subject: Re: Your account has been limited');
    expect(text('arc')).toMatch(/dmarc=fail header\.from=paypal\.com; arc=pass/);
    expect(text('arc')).toContain('ARC-Seal: i=1');
    expect(text('report')).toContain('multipart/report; report-type=delivery-status');
    expect(text('report')).toContain('Return-Path: <>');
    expect(text('on_behalf')).toBe(raw.toString('latin1')); // its display name shows no address
    expect(text('own_link')).toContain('<p><a href="https://paypal.com/">paypal.com</a></p>');
    expect(forge('on_behalf', PHISHING.reply_elsewhere!).toString('latin1')).toBe(
      PHISHING.reply_elsewhere!.toString('latin1'), // a Reply-To is there already
    );
  });
});
