import { parseRawEmail } from '@trawl/mail';
import { describe, expect, it } from 'vitest';
import { carriesElsewhere } from '../../src/shared/brand-mail.ts';
import { raw } from '../fixtures/everyday-mail.ts';
import { verdict } from '../fixtures/verdict.ts';

const google = (d: string) => d === 'google.com' || d === 'youtube.com';

describe('a brand’s own mail (issue 27)', () => {
  it('a link carrying another address leads there; one carrying the brand’s leads to the brand', () => {
    expect(
      carriesElsewhere(
        'https://accounts.google.com/AccountChooser?continue=https://myaccount.google.com/alert',
        google,
      ),
    ).toBe(false);
    expect(
      carriesElsewhere('https://www.google.com/url?q=https://login-check.test/a', google),
    ).toBe(true);
    expect(
      carriesElsewhere('https://www.google.com/url?q=https%3A%2F%2Flogin-check.test%2Fa', google),
    ).toBe(true);
    expect(carriesElsewhere('https://myaccount.google.com/security', google)).toBe(false);
  });

  it('a platform’s user writing under its name gets nothing explained', async () => {
    // a file shared through the platform, the lure in the sharer's words
    const share = await verdict(
      await parseRawEmail(
        raw({
          from: 'IT Support (via Google Drive) <drive-shares-dm-noreply@google.com>',
          subject: 'Security alert: your mailbox will be blocked',
          headers: ['Reply-To: it.support.desk@gmail.com'],
          text: 'IT Support shared a file with you: "Mailbox verification.pdf"\n\nYour mailbox will be blocked within 24 hours. Sign in to verify your account now.\n\nOpen: https://drive.google.com/file/d/1AbCdEfGhIjKlMnOp/view?usp=sharing_eil',
        }),
      ),
    );
    expect(share.symbols).not.toContain('content.brand_links_explain_alert');
    // the platform's own name, its own links: the alarm is explained, the request never
    const request = await verdict(
      await parseRawEmail(
        raw({
          from: 'PayPal <service@paypal.com>',
          subject: 'Payment request: your account will be suspended',
          text: 'Pay the outstanding invoice of 499.00 USD today or your account will be suspended. Please pay now: https://www.paypal.com/invoice/p/#INV2-ABCD-1234',
        }),
      ),
    );
    expect(request.symbols).not.toContain('content.brand_links_explain_request');
  });
});
