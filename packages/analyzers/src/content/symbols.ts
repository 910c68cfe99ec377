import { defineSymbols, type SymbolDef } from '../shared/symbols.ts';

/**
 * Log-odds per distinct phrase of each language category (lexicons/<lang>.yaml); a category's
 * symbol is `<category>_<n>` for n = 1, 2, 3 or more phrases (subject phrases count twice).
 * Every language's lexicon takes the same scores: no fitted per-language weight.
 */
export const CATEGORY_PER_HIT = {
  urgency: 0.45,
  threat: 0.55,
  reward: 0.5,
  credential: 0.7,
  payment: 0.4,
  spam: 0.6,
} as const;

const CATEGORY_REASON: Record<keyof typeof CATEGORY_PER_HIT, [string, 'pressure' | 'request']> = {
  urgency: [
    'urgency phrases (act now, within 24 hours); everyday words alone are not listed',
    'pressure',
  ],
  threat: ['threat phrases (account suspended, legal action)', 'pressure'],
  reward: ['reward phrases (you have won, claim your prize)', 'pressure'],
  credential: ['requests to sign in, verify or confirm an account or password', 'request'],
  payment: ['requests to pay, update billing details or settle an invoice', 'request'],
  spam: ['unsolicited-offer phrases (limited offer, risk-free)', 'pressure'],
};

function categorySymbols(): Record<string, SymbolDef> {
  const out: Record<string, SymbolDef> = {};
  for (const [cat, perHit] of Object.entries(CATEGORY_PER_HIT) as [
    keyof typeof CATEGORY_PER_HIT,
    number,
  ][]) {
    const [reason, group] = CATEGORY_REASON[cat];
    for (const n of [1, 2, 3])
      out[`${cat}_${n}`] = {
        score: Math.round(perHit * n * 100) / 100,
        group,
        reason: `${reason}: ${n}${n === 3 ? ' or more' : ''}`,
      };
    out[`subject_${cat}`] = {
      score: 0,
      group,
      reason: `${reason}, in the subject (counted twice in ${cat}_n; reported for rules)`,
    };
  }
  return out;
}

/** The symbols of the content techniques (the language categories' are above); each score a setting. */
export const CONTENT_TECHNIQUE_SYMBOLS = defineSymbols({
  combo_bonus: {
    score: 1.0,
    group: 'pressure',
    reason: 'three or more kinds of pressure language together',
  },
  negative_sentiment: {
    score: 0.3,
    group: 'pressure',
    reason: 'an alarming tone overall',
  },
  machine_report: {
    score: 0,
    group: 'structure',
    reason:
      'a delivery report, read receipt, TLS or DMARC report by its structure (RFC 3464, 8098, 8460, 7489) that links nowhere but its reporter: explains its own delivery wording and nothing else (scores nothing itself)',
  },
  subject_money: {
    score: 0.3,
    group: 'pressure',
    reason: 'money or a discount named in the subject',
  },
  brand_impersonation: {
    score: 1.8,
    group: 'brand',
    reason:
      'a brand named with a request, by a sender and links that are not the brand’s (scaled by how surely the brand is meant)',
  },
  brand_sender_offsite_links: {
    score: 2.0,
    group: 'brand',
    reason:
      'From is a brand’s own domain, the message asks for credentials or money, and no link goes to the brand (a spoofed sender)',
  },
  institution_sender_offsite_links: {
    score: 1.5,
    group: 'brand',
    reason:
      'From a bank’s or carrier’s own name or domain that no brand list holds, asking for credentials or money, with no link to that domain (a spoofed sender)',
  },
  brand_links_explain_request: {
    score: -2.0,
    group: 'request',
    reason:
      'From is a brand’s own domain and every link, reply address and form goes to that brand, no attachment: a request there can only be answered at the real brand (explains the request language, never below 0)',
  },
  brand_links_explain_alert: {
    score: -2.0,
    group: 'pressure',
    reason:
      'the same brand-only mail: its alert and pressure language (security alerts, expiring offers) is the brand’s own (never below 0)',
  },
  brand_mention: {
    score: 0.3,
    group: 'brand',
    reason: 'a brand named in the subject by a sender that is not the brand',
  },
  callback_lure: {
    score: 2.0,
    group: 'request',
    reason:
      'a charge, renewal or order for a sum of money with a telephone number to call and no link to the sender’s own domain (call-back fraud)',
  },
  text_obfuscation: {
    score: 2.0,
    group: 'obfuscation',
    reason: 'invisible characters, styled letters or mixed-script words against keyword filters',
  },
  inserted_noise: {
    score: 2.0,
    group: 'obfuscation',
    reason: 'one junk token stuffed into the words again and again',
  },
  hidden_text: {
    score: 2.0,
    group: 'obfuscation',
    reason: 'HTML pushes text far off screen (hidden filler or a hidden lure)',
  },
  html_only: {
    score: 0.7,
    group: 'structure',
    reason:
      'HTML without the plain-text alternative that mail clients and bulk-mail tools write, from a sender that is not a managed list',
  },
  hidden_offsite_links: {
    score: 1.0,
    group: 'link_hosting',
    reason:
      'an organisation’s mail whose every link goes to another domain than its own or its signer’s, none showing where (not free mail, not an authenticated list or bulk sender)',
  },
  foreign_newsletter: {
    score: 1.5,
    group: 'sender',
    reason:
      'the unsubscribe link (or address) of bulk mail goes to another domain than the sender’s own, its signer’s or its account at a mail service: someone else’s newsletter or list, sent from an unrelated domain',
  },
  image_only: {
    score: 1.5,
    group: 'obfuscation',
    reason: 'the message is an image with a link and almost no text, unreadable to filters',
  },
  greeting_address: {
    score: 1.2,
    group: 'addressing',
    reason:
      'the message greets the recipient by their e-mail address ("Hello jane@…"): a mass mailer knows nothing else of them',
  },
  customer_greeting_free_mail: {
    score: 1.0,
    group: 'addressing',
    reason:
      'a provider’s greeting to its customer, user or member ("Dear Customer", "Lieber Kunde") from a free-mail mailbox: providers write from their own domains',
  },
  generic_greeting: {
    score: 0.5,
    group: 'addressing',
    reason:
      'a generic greeting ("Dear Customer", "Dear PayPal Member") where a real correspondent uses a name',
  },
});

/** The content analyzer's symbols with their declared scores (log-odds). */
export const CONTENT_SYMBOLS = {
  ...categorySymbols(),
  ...CONTENT_TECHNIQUE_SYMBOLS,
} satisfies Record<string, SymbolDef>;
