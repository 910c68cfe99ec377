import { parseRawEmail } from '@trawl/mail';
import { describe, expect, it } from 'vitest';
import { raw, type Sample } from '../fixtures/everyday-mail.ts';
import { ACCOUNT_SAMPLES } from '../fixtures/everyday-mail-accounts.ts';
import { BRAND_SAMPLES } from '../fixtures/everyday-mail-brands.ts';
import { BRAND_SAMPLES_2 } from '../fixtures/everyday-mail-brands-2.ts';
import { DESK_SAMPLES } from '../fixtures/everyday-mail-desk.ts';
import { FRENCH_DESK_SAMPLES } from '../fixtures/everyday-mail-fr.ts';
import { MACHINE_SAMPLES } from '../fixtures/everyday-mail-machine.ts';
import { MORE_SAMPLES } from '../fixtures/everyday-mail-more.ts';
import { NOTICE_SAMPLES } from '../fixtures/everyday-mail-notices.ts';
import { verdict } from '../fixtures/verdict.ts';

/**
 * More legitimate mail of the classes issue 27 measures Trawl on and the corpora lack: large
 * brands' parcel, order and account notifications with their headers cut down; help-desk replies
 * in nine languages; certified mail (PEC) and e-invoice (SdI) receipts; bounces and read receipts;
 * bank transfer notices; codes and resets the user asked for. Written by hand, none copied from a
 * corpus: nothing here may be phishing by its content and structure alone.
 */
const SETS: Record<string, Record<string, Sample>> = {
  'brand notifications': BRAND_SAMPLES,
  'brand alerts and bills': BRAND_SAMPLES_2,
  'help-desk replies': DESK_SAMPLES,
  'French help desks on what lures borrow': FRENCH_DESK_SAMPLES,
  'machine mail': MACHINE_SAMPLES,
  'bank, account and shop mail': ACCOUNT_SAMPLES,
  'reminders, shares and other languages': MORE_SAMPLES,
  'money and certified-mail notices': NOTICE_SAMPLES,
};

/**
 * Still phishing, each for a reason no principle found here answers without opening a way for
 * lures (docs/analyzers.md); `it.fails` keeps them in sight: the day one passes, move it out.
 */
const KNOWN_WEAK: Record<string, string> = {
  // its notification domain combines the brand's names; only brand data can say it is the brand's
  'a Colissimo notice from its notification domain (French)': 'sender_lookalike',
  // every link through the mail service's unbranded click tracking, as abused accounts send
  'a password reset the user asked for, tracked by the sender’s mail service':
    'hidden_offsite_links',
  // language alone: a supplier's dunning letter says what invoice fraud says (sender history could)
  'a supplier’s final notice of an overdue invoice': 'payment, urgency and threat language',
};

for (const [set, samples] of Object.entries(SETS)) {
  describe(`everyday legitimate mail, ${set} (issue 27)`, () => {
    for (const [name, sample] of Object.entries(samples)) {
      const test = KNOWN_WEAK[name] ? it.fails : it;
      test(`${name} is not phishing`, async () => {
        const v = await verdict(await parseRawEmail(raw(sample)));
        expect(v.phishing, `${name}: ${v.symbols?.join(', ')}`).toBe(false);
      });
    }
  });
}
