import { defineSymbols } from '../shared/symbols.ts';

/**
 * The header analyzer's symbols with their declared scores (log-odds). Authentication symbols read
 * only the results the receiving organisation's own hop wrote (see shared/auth-results.ts).
 */
export const HEADERS_SYMBOLS = defineSymbols({
  spf_fail: {
    score: 1.5,
    group: 'auth',
    reason: 'the sending host is not allowed to send for the envelope domain (SPF fail)',
  },
  spf_softfail: {
    score: 0.7,
    group: 'auth',
    reason: 'the envelope domain says the sending host is probably not its own (SPF softfail)',
  },
  own_domain_unauthenticated: {
    score: 1.5,
    group: 'auth',
    reason:
      'From is in the organisation’s or the recipient’s own domain, yet its receiving server found SPF or DMARC failing: an outsider using that domain',
  },
  dkim_fail: {
    score: 1.0,
    group: 'auth',
    reason: 'a DKIM signature did not verify at the receiving hop: altered or forged',
  },
  dmarc_fail: {
    score: 2.5,
    group: 'auth',
    reason: 'the From domain is not authenticated although it asks to be (DMARC fail)',
  },
  arc_fail: {
    score: 0.3,
    group: 'auth',
    reason: 'the ARC chain of the intermediaries is broken (weak: forwarders break it too)',
  },
  list_explains_auth_failure: {
    score: -3.5,
    group: 'auth',
    reason:
      'a mailing list whose DKIM signature covers its List-Id relayed the author’s From unchanged; it explains the author’s broken DKIM and DMARC and nothing else',
  },
  reply_to_mismatch: {
    score: 0.8,
    group: 'reply_to',
    reason: 'replies go to another organisation than the sender',
  },
  reply_to_free_mail: {
    score: 1.6,
    group: 'reply_to',
    reason: 'replies go to a free-mail mailbox while the sender is an organisation',
  },
  return_path_mismatch: {
    score: 0.3,
    group: 'reply_to',
    reason: 'bounces go to another organisation (weak: bulk senders use bounce domains)',
  },
  list_explains_reply_to: {
    score: -3,
    group: 'reply_to',
    reason:
      'a mailing list rewrote From to its own address and put the author in Reply-To (DMARC mitigation); it explains the Reply-To and nothing else',
  },
  display_name_address: {
    score: 2.0,
    group: 'sender',
    reason: 'the display name shows an address of another domain than the real sender',
  },
  on_behalf_of: {
    score: 2.0,
    group: 'sender',
    reason:
      'the display name shows another address and replies go to it: a service sending for someone (certified mail, e-invoicing, forms) or a spoofer; one fact, counted once for display name and Reply-To',
  },
  display_name_brand: {
    score: 2.2,
    group: 'sender',
    reason: 'the display name names a brand or the organisation, the address is not theirs',
  },
  display_name_brand_free_mail: {
    score: 3.0,
    group: 'sender',
    reason: 'the display name names a brand, the address is a free-mail mailbox',
  },
  display_name_institution: {
    score: 2.0,
    group: 'sender',
    reason:
      'the display name is a bank’s or a parcel carrier’s (bank, banco, Sparkasse, 銀行, couriers, Paket …) and the sender domain holds neither its name nor its initials',
  },
  unrelated_org_name: {
    score: 1.5,
    group: 'sender',
    reason: 'an organisation name as display name on an address that has nothing to do with it',
  },
  from_no_address: {
    score: 1.5,
    group: 'sender',
    reason: 'From holds a name and no address: mail software always writes one, a lure hides it',
  },
  from_address_malformed: {
    score: 1.5,
    group: 'sender',
    reason:
      'the From address is not one mail can come from (a domain without a top-level domain, stray quotes or dots)',
  },
  display_name_recipient_domain: {
    score: 2.0,
    group: 'sender',
    reason:
      'the display name shows the recipient’s own domain (its "admin", "mailer daemon") on an address outside it',
  },
  system_notice_name: {
    score: 1.0,
    group: 'sender',
    reason:
      'a mail-system or help-desk sender name (Mail Delivery System, Email Administrator, Voice Mail) on a message with web links, which real system notices do not need',
  },
  display_name_malformed: {
    score: 0.8,
    group: 'sender',
    reason: 'the display name is mangled to defeat matching (stray symbols, cut words)',
  },
  sender_lookalike: {
    score: 3.0,
    group: 'brand',
    reason: 'the sender domain imitates a brand or the organisation (typo, homoglyph, affix)',
  },
  sender_punycode: {
    score: 1.5,
    group: 'sender_domain',
    reason: 'the sender domain is written in punycode, the way homograph domains are',
  },
  random_domain: {
    score: 1.0,
    group: 'sender_domain',
    reason: 'the sender or bounce domain looks machine-generated (throw-away domains)',
  },
  risky_tld: {
    score: 1.0,
    group: 'sender_domain',
    reason: 'the sender or bounce domain is under a top-level domain with a high abuse rate',
  },
  generated_subdomain: {
    score: 0.8,
    group: 'sender_domain',
    reason: 'the sending host has a generated label (per-campaign subdomains)',
  },
  generated_local_part: {
    score: 0.8,
    group: 'sender_domain',
    reason: 'the sender mailbox name looks generated (runs of separators, a dozen digits or more)',
  },
  self_addressed: {
    score: 1.0,
    group: 'header_tricks',
    reason: 'From is the recipient’s own address (spoofed "your mailbox" and extortion lures)',
  },
  recipient_in_subject: {
    score: 1.5,
    group: 'header_tricks',
    reason: 'the recipient’s address or mailbox name is used as bait in the subject',
  },
  recipient_domain_in_subject: {
    score: 0.8,
    group: 'header_tricks',
    reason: 'the recipient’s own domain named in the subject (mailbox and account lures)',
  },
  address_in_subject: {
    score: 0.8,
    group: 'header_tricks',
    reason: 'the subject shows an e-mail address (mailbox-quota and account lures)',
  },
  junk_suffix: {
    score: 1.2,
    group: 'header_tricks',
    reason: 'a junk token appended to the subject or name to defeat matching of repeats',
  },
  fake_reply: {
    score: 0.8,
    group: 'header_tricks',
    reason: 'the subject poses as a reply but the message answers nothing',
  },
  message_id_missing: {
    score: 0.3,
    group: 'header_tricks',
    reason: 'no Message-ID: written by a bulk tool, not a mail client or server',
  },
  message_id_malformed: {
    score: 0.3,
    group: 'header_tricks',
    reason: 'a Message-ID that no mail software writes',
  },
  date_future: {
    score: 0.5,
    group: 'header_tricks',
    reason: 'the Date lies more than a day after the message was received',
  },
  disguised_brand: {
    score: 2.0,
    group: 'brand',
    reason:
      'a brand named in the subject or sender name with look-alike characters ("lRS", "PayPaI", "Amaz0n"), written so that filters miss it',
  },
  broken_words: {
    score: 1.2,
    group: 'obfuscation',
    reason:
      'words cut up by spaces or dots, or joined by underscores, in the subject or sender name to defeat filters',
  },
  dmarc_pass_own_domain: {
    score: -3,
    group: 'standing',
    reason:
      'DMARC-aligned pass, recorded by the organisation’s own hop, for one of the organisation’s own domains',
  },
  dmarc_pass_brand_domain: {
    score: -2,
    group: 'standing',
    reason:
      'DMARC-aligned pass, recorded by the organisation’s own hop, for the real domain of a brand the message names',
  },
});
