import { defineSymbols } from '../shared/symbols.ts';

/**
 * The `intel` analyzer's symbols (log-odds). A feed hit is strong evidence on its own: a curated
 * phishing or malware feed lists a URL, domain or file only after someone saw it attack. The
 * scores are set so that a hit alone carries the verdict past the scorer's bias (−3) and they rank
 * by specificity: an exact file is the attack itself, an exact URL is one page, a host or domain
 * may serve other pages too. They share the group `threat_intel` (one listing seen several ways:
 * a URL hit usually brings its host's hit with it), capped at 6.
 */
export const INTEL_SYMBOLS = defineSymbols({
  attachment_listed: {
    score: 5.0,
    group: 'threat_intel',
    reason:
      'an attachment whose md5, sha1 or sha256 a malware or phishing feed lists: this very file was seen attacking',
  },
  url_listed: {
    score: 4.0,
    group: 'threat_intel',
    reason: 'a link a phishing or malware feed lists (OpenPhish, PhishTank, URLhaus, MISP)',
  },
  host_listed: {
    score: 3.5,
    group: 'threat_intel',
    reason:
      'a link to a host name or IP address a threat feed lists (more specific than its domain)',
  },
  domain_listed: {
    score: 3.0,
    group: 'threat_intel',
    reason: 'a link into a registrable domain a threat feed lists as malicious',
  },
});

export type IntelSymbol = keyof typeof INTEL_SYMBOLS;
