import { defineSymbols } from '../shared/symbols.ts';

/**
 * The symbols of the organisation's allow and block lists (issue 32). A block is the
 * organisation's decision that the mail is unwanted: it outweighs any evidence of legitimacy. An
 * allow is strong evidence of legitimate mail, but its group (`org_allow`) counts nothing when a
 * block matched, when a threat-intelligence feed lists something the message carries, or when it
 * carries a payload (a malicious attachment, a credential form): see the scorer's `yields_to`.
 */
export const LIST_SYMBOLS = defineSymbols({
  list_block_sender: {
    score: 10,
    group: 'org_block',
    reason: "the From address is on the organisation's block list",
  },
  list_block_sender_domain: {
    score: 10,
    group: 'org_block',
    reason: "the From domain is on the organisation's block list",
  },
  list_block_url_host: {
    score: 10,
    group: 'org_block',
    reason: "a link goes to a host on the organisation's block list",
  },
  list_block_sha256: {
    score: 10,
    group: 'org_block',
    reason: "an attachment's SHA-256 is on the organisation's block list",
  },
  list_allow_sender: {
    score: -8,
    group: 'org_allow',
    reason:
      "the From address is on the organisation's allow list and its domain authenticated the message (DMARC or DKIM, aligned)",
  },
  list_allow_sender_domain: {
    score: -8,
    group: 'org_allow',
    reason:
      "the From domain is on the organisation's allow list and authenticated the message (DMARC or DKIM, aligned)",
  },
  list_allow_url_host: {
    score: -3,
    group: 'org_allow',
    reason: "every link of the message goes to a host on the organisation's allow list",
  },
  list_allow_sha256: {
    score: -3,
    group: 'org_allow',
    reason: "every attachment's SHA-256 is on the organisation's allow list",
  },
});
