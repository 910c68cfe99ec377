import { defineSymbols } from '../shared/symbols.ts';

/** The URL analyzer's symbols with their declared scores (log-odds). It never fetches a URL. */
export const URLS_SYMBOLS = defineSymbols({
  ip_url: {
    score: 2.0,
    group: 'deceptive_links',
    reason:
      'a link to a bare IP address: no name to check, the classic way to hide a phishing host',
  },
  userinfo: {
    score: 1.5,
    group: 'deceptive_links',
    reason: 'a link with user@ before the host, showing a trusted name that is not where it goes',
  },
  encoded_host: {
    score: 2.0,
    group: 'deceptive_links',
    reason:
      'a link whose host is written to be unreadable (%-escapes, an IP as one number or in hex): the browser decodes it, the reader cannot',
  },
  status_bar_spoof: {
    score: 2.0,
    group: 'deceptive_links',
    reason:
      'the HTML rewrites the status bar on hover to show an address other than the link’s (window.status)',
  },
  punycode: {
    score: 1.5,
    group: 'deceptive_links',
    reason: 'a link host in punycode, the way homograph domains are written',
  },
  mixed_script: {
    score: 2.0,
    group: 'deceptive_links',
    reason: 'a link host mixing scripts (Latin with Cyrillic or Greek look-alike letters)',
  },
  lookalike: {
    score: 2.5,
    group: 'deceptive_links',
    reason: 'a link domain imitating a brand or the organisation (typo, homoglyph, affix)',
  },
  brand_in_subdomain: {
    score: 1.5,
    group: 'deceptive_links',
    reason: 'a brand’s name as a subdomain of an unrelated domain (paypal.com.example.net)',
  },
  brand_in_path: {
    score: 0.6,
    group: 'deceptive_links',
    reason: 'a brand’s name in the path of an unrelated domain',
  },
  brand_link_text_mismatch: {
    score: 2.0,
    group: 'deceptive_links',
    reason: 'the link text shows a brand’s domain and the link points elsewhere',
  },
  link_text_mismatch: {
    score: 0.3,
    group: 'deceptive_links',
    reason: 'the link text shows one domain and the link points to another (weak: trackers do it)',
  },
  script_url: {
    score: 1.5,
    group: 'payload',
    reason: 'a javascript: or data: link',
  },
  credential_form: {
    score: 2.5,
    group: 'payload',
    reason: 'a form asking for a password inside the message',
  },
  sensitive_form: {
    score: 2.5,
    group: 'payload',
    reason: 'a form in the message asks for card, PIN, social-security or account numbers',
  },
  external_form: {
    score: 0,
    group: 'payload',
    reason:
      'a form posting outside the sender’s domain (no score alone: newsletters carry search and subscribe forms)',
  },
  shortener: {
    score: 0.9,
    group: 'link_hosting',
    reason: 'a shortened link hides its destination',
  },
  free_hosting: {
    score: 1.0,
    group: 'link_hosting',
    reason:
      'a link to free web hosting or a form builder, where phishing pages are set up in minutes',
  },
  risky_tld: {
    score: 0.7,
    group: 'link_hosting',
    reason: 'a link under a top-level domain with a high abuse rate',
  },
  random_domain: {
    score: 1.0,
    group: 'link_hosting',
    reason: 'a link domain that looks machine-generated',
  },
  recipient_in_url: {
    score: 0.2,
    group: 'header_tricks',
    reason: 'the recipient’s address in a link (pre-filled phishing pages; weak: trackers do it)',
  },
  recipient_in_fragment: {
    score: 1.5,
    group: 'deceptive_links',
    reason:
      'the recipient’s address in a link’s fragment, which only the page’s script reads: a sign-in page pre-filled for the target',
  },
  many_hidden_links: {
    score: 0.3,
    group: 'obfuscation',
    reason: 'many links hidden from view',
  },
});
