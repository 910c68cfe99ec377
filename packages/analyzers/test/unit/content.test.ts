import { describe, expect, it } from 'vitest';
import { analyzeContent, ContentSettings } from '../../src/content/index.ts';
import { hamColleague, makeEmail } from '../fixtures/emails.ts';

const settings = ContentSettings.parse({});
const types = (e: ReturnType<typeof makeEmail>, s = settings) =>
  analyzeContent(e, s).indicators?.map((i) => i.type) ?? [];

describe('content analyzer', () => {
  it('raises nothing on a friendly colleague message', () => {
    const a = analyzeContent(hamColleague(), settings);
    expect(a.indicators).toEqual([]);
    expect(a.is_phishing).toBe(false);
  });

  it('html_only: HTML without a text alternative, outside list and newsletter mail', () => {
    const symbols = (e: ReturnType<typeof makeEmail>) =>
      (analyzeContent(e, settings).analyzer_details?.symbols as string[] | undefined) ?? [];
    const html = '<p>Hello, your parcel is waiting.</p>';
    expect(symbols(makeEmail({ html }))).toContain('html_only');
    // a mail client writes the text alternative too
    expect(symbols(makeEmail({ html, text: 'Hello, the agenda is attached.' }))).not.toContain(
      'html_only',
    );
    // a text part that says something else (a report's fields, filler) is no alternative
    expect(
      symbols(
        makeEmail({
          html: '<p>Your mailbox storage is full. Upgrade your storage today to keep receiving messages from your contacts.</p>',
          text: 'Reporting-MTA: dns; mx.example.net\nAction: failed\nStatus: 5.1.1',
        }),
      ),
    ).toContain('html_only');
    // a newsletter tool or a list manager may send HTML alone, when it vouches for it: a signature
    // of another domain than the author's (the list's, the mail service's) covers List-Unsubscribe
    const received = 'from out.esp.example by mx.example.net (Postfix)';
    const vouched = {
      received,
      'authentication-results': 'mx.example.net; dkim=pass header.d=esp.example; spf=pass',
      'dkim-signature':
        'v=1; a=rsa-sha256; d=esp.example; s=k; h=from:to:subject:list-unsubscribe; b=x',
      'list-unsubscribe': '<https://esp.example/u/1>',
    };
    expect(symbols(makeEmail({ html, headers: vouched }))).not.toContain('html_only');
    // the author vouching for his own List-Unsubscribe proves nothing; nor does an unsigned one
    const own = {
      ...vouched,
      'authentication-results': 'mx.example.net; dkim=pass header.d=example.org',
    };
    own['dkim-signature'] = own['dkim-signature'].replace('esp.example', 'example.org');
    expect(symbols(makeEmail({ html, headers: own }))).toContain('html_only');
    expect(
      symbols(
        makeEmail({
          html,
          headers: {
            received,
            'authentication-results': 'mx.example.net; spf=pass',
            'list-unsubscribe': '<https://news.example.org/u/1>',
            'list-id': '<news.example.org>',
          },
        }),
      ),
    ).toContain('html_only');
    // where the receiving hop recorded no authentication at all, a bulk sender's whole shape
    // stands in: From, the envelope sender and the List-Unsubscribe address at one domain
    const shaped = (rp: string) =>
      symbols(
        makeEmail({
          html,
          headers: { 'return-path': rp, 'list-unsubscribe': '<mailto:leave@example.org>' },
        }),
      );
    expect(shaped('<bounce-1@mail.example.org>')).not.toContain('html_only');
    expect(shaped('<anyone@elsewhere.test>')).toContain('html_only');
  });

  it('finds urgency, threat and credential-request language (en)', () => {
    const e = makeEmail({
      subject: 'Action required: your account has been suspended',
      text: 'Unusual sign-in activity was detected. Verify your account within 24 hours or it will be permanently deleted. Sign in to restore access.',
    });
    const t = types(e);
    expect(t).toEqual(
      expect.arrayContaining(['urgency_language', 'threat_language', 'credential_request']),
    );
    expect(analyzeContent(e, settings).is_phishing).toBe(true);
  });

  it('finds a greeting by e-mail address, in any of the lexicon languages', () => {
    const symbols = (text: string) =>
      analyzeContent(makeEmail({ text }), settings).analyzer_details?.symbols as string[];
    expect(symbols('Hello bob@example.net,\nyour parcel is waiting.')).toContain(
      'greeting_address',
    );
    expect(symbols('Hallo bob@example.net\nIhr Paket wartet.')).toContain('greeting_address');
    expect(symbols('Sr: bob@example.net Número do processo 1')).toContain('greeting_address');
    // an address elsewhere in the text is not a greeting
    expect(symbols('Hi Bob, write to alice@example.org about lunch.')).not.toContain(
      'greeting_address',
    );
  });

  it('finds a generic greeting, but not a list addressing its members', () => {
    const symbols = (text: string) =>
      analyzeContent(makeEmail({ text }), settings).analyzer_details?.symbols as string[];
    expect(symbols('Dear Customer,\nplease review.')).toContain('generic_greeting');
    expect(symbols('Dear PayPal Member, please review.')).toContain('generic_greeting');
    expect(symbols('Sehr geehrter Kunde, bitte prüfen.')).toContain('generic_greeting');
    expect(symbols('Dear Members, the meeting moved.')).not.toContain('generic_greeting');
    expect(symbols('Dear Bob, see you at lunch.')).not.toContain('generic_greeting');
  });

  it('does not take a rewritten link’s repeated token for inserted noise', () => {
    const link = 'https://urldefense.test/v3/__https://x.test/a__;!!ab14UI9Kmd!x14UI9Kqz$';
    const text = `See the thread ${link} and ${link} also ${link}, ${link}, ${link}; regards`;
    const symbols = analyzeContent(makeEmail({ text }), settings).analyzer_details?.symbols;
    expect(symbols).not.toContain('inserted_noise');
    // the same token stuffed into the words is
    const stuffed = 'pay14UI9Kment con14UI9Kfirm acc14UI9Kount ver14UI9Kify pass14UI9Kword now';
    expect(
      analyzeContent(makeEmail({ text: stuffed }), settings).analyzer_details?.symbols,
    ).toContain('inserted_noise');
  });

  it('finds reward language', () => {
    expect(
      types(
        makeEmail({
          subject: 'Congratulations, you have won!',
          text: 'Claim your prize and free gift card now.',
        }),
      ),
    ).toContain('reward_language');
  });

  it('finds payment and gift-card language', () => {
    expect(
      types(
        makeEmail({
          text: 'Your payment failed. Please buy gift cards or make a wire transfer today to settle your outstanding balance.',
        }),
      ),
    ).toContain('payment_request');
  });

  it.each([
    [
      'de',
      'Ihr Konto wurde gesperrt',
      'Bitte bestätigen Sie Ihr Konto sofort, sonst wird es gelöscht. Melden Sie sich an.',
    ],
    [
      'pt',
      'Aviso: encomenda retida',
      'Sua encomenda está retida. Pague a taxa de envio imediatamente e confirme seus dados.',
    ],
    [
      'nl',
      'Uw rekening is geblokkeerd',
      'Bevestig uw gegevens binnen 24 uur. Log in en werk uw gegevens bij, anders volgt een incassobureau.',
    ],
    [
      'fr',
      'Votre compte est suspendu',
      'Confirmez votre identité immédiatement. Connectez-vous et mettez à jour vos informations de paiement.',
    ],
    [
      'es',
      'Su cuenta ha sido bloqueada',
      'Verifique su identidad de inmediato e inicie sesión para actualizar sus datos bancarios.',
    ],
  ])('finds pressure language in %s', (lang, subject, text) => {
    const e = makeEmail({ subject, text });
    const a = analyzeContent({ ...e, language: lang }, settings);
    expect(a.indicators?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(a.is_phishing).toBe(true);
  });

  it('finds unsolicited-offer (spam) language', () => {
    expect(
      types(
        makeEmail({
          subject: 'Hot singles near you',
          text: 'Free spins at our casino, no deposit needed.',
        }),
      ),
    ).toContain('spam_language');
  });

  it('scores an alarming tone as negative sentiment', () => {
    const e = makeEmail({
      subject: 'Warning: security alert',
      text: 'Error: your payment failed, fraud risk, account blocked, danger of loss.',
    });
    expect(types(e)).toContain('negative_sentiment');
  });

  it('flags a brand named with a request when the sender is not that brand', () => {
    const e = makeEmail({
      from: 'Support <info@mail-center.test>',
      subject: 'Your Netflix membership is on hold',
      text: 'We could not process your payment. Update your payment details and sign in to Netflix to keep watching.',
    });
    expect(types(e)).toContain('brand_impersonation');
  });

  it('does not flag a brand writing from its own domain', () => {
    const e = makeEmail({
      from: 'Netflix <info@netflix.com>',
      subject: 'Your Netflix membership is on hold',
      text: 'We could not process your payment. Update your payment details and sign in to Netflix.',
    });
    expect(types(e)).not.toContain('brand_impersonation');
  });

  it('honours ner_confidence_threshold', () => {
    const s = ContentSettings.parse({ ner_confidence_threshold: 0.95 });
    const e = makeEmail({
      from: 'x <a@b.test>',
      subject: 'Your Netflix membership is on hold',
      text: 'Update your payment details and sign in now, your account is suspended.',
    });
    expect(types(e, s)).not.toContain('brand_impersonation');
  });

  it('flags text broken up with invisible characters', () => {
    const zw = '\u200b';
    const e = makeEmail({
      text: `Ver${zw}ify y${zw}our acc${zw}ount at on${zw}ce, cl${zw}ick he${zw}re to lo${zw}gin.`,
    });
    expect(types(e)).toContain('text_obfuscation');
  });

  it('flags words mixing Latin and Cyrillic letters', () => {
    const e = makeEmail({ text: 'Your Pаypal аccount (Cyrillic а) needs аttention today.' });
    expect(types(e)).toContain('text_obfuscation');
  });

  it('stays bounded on a huge body', () => {
    const e = makeEmail({ text: 'urgent '.repeat(200_000) });
    const a = analyzeContent(e, settings);
    expect(a.indicators?.length ?? 0).toBeLessThanOrEqual(50);
  });
});
