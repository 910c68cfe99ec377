/**
 * Banks and parcel carriers, the two kinds of sender phishing imitates most (APWG), recognised by
 * the word for them rather than by a list of names: no list of the world's banks, credit unions
 * and carriers can be complete.
 */

/** The word for a bank or a parcel carrier in a name, in the lexicons' languages and in CJK. */
export const INSTITUTION_WORD =
  /(?:^|[^\p{L}\p{N}])(?:bank|banco|banque|bancorp|banca|sparkasse|volksbank|raiffeisenbank|credit union|couriers|kurier|parcels?|paket|colis|correios|correos|logistics|logistik)(?![\p{L}\p{N}])|銀行|银行|은행/iu;

/** The same inside a domain label, where words are run together ("sovereignbank", "navyfcu"). */
const INSTITUTION_IN_LABEL = /bank|banco|banque|sparkasse|creditunion/;

/**
 * Whether a sender presents itself as a bank or a carrier: its display name says so, or its
 * registrable domain's main label does (`sovereignbank.com`).
 */
export function institutionSender(displayName: string, orgDomain: string): boolean {
  if (INSTITUTION_WORD.test(displayName.slice(0, 200))) return true;
  const label = orgDomain.split('.')[0] ?? '';
  return INSTITUTION_IN_LABEL.test(label);
}
