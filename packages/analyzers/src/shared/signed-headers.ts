import type { Email } from '@trawl/contracts';
import type { AuthResults } from './auth-results.ts';

import { angleContent, firstHeader, headerValues } from './header-values.ts';
import { type MailView, orgDomain } from './view.ts';

/**
 * Which headers a domain that authenticated the message vouches for. Anyone can write a List-Id, a
 * List-Unsubscribe or a Sender header; what they say counts as evidence only when a DKIM signature
 * the receiving organisation's own hop verified covers them (RFC 6376 `h=`), or is the list's own
 * (RFC 8058 asks bulk senders to sign List-Unsubscribe for the same reason).
 */

/** A `tag=value` of a DKIM-Signature value, lower-case, folding white space removed. */
function dkimTag(sig: string, tag: string): string {
  for (const part of sig.split(';', 40)) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim().toLowerCase() === tag)
      return part
        .slice(eq + 1)
        .replace(/\s+/g, '')
        .toLowerCase();
  }
  return '';
}

/** Whether the trusted hop verified a DKIM signature of `d` (or of a domain below it). */
function passed(a: AuthResults, d: string): boolean {
  return a.dkim_pass_domains.some((p) => p === d || p.endsWith(`.${d}`));
}

/**
 * The signing domain of a DKIM signature the trusted hop verified whose signed headers include
 * `header` (lower-case), skipping signatures of `exceptOrg` (a registrable domain); else undefined.
 */
export function signerCovering(
  email: Email,
  a: AuthResults,
  header: string,
  exceptOrg = '',
): string | undefined {
  if (!a.verified || a.dkim_pass_domains.length === 0) return undefined;
  for (const sig of headerValues(email, 'dkim-signature').slice(0, 10)) {
    const d = dkimTag(sig, 'd');
    if (!d || (exceptOrg && orgDomain(d) === exceptOrg) || !passed(a, d)) continue;
    if (dkimTag(sig, 'h').split(':').includes(header)) return d;
  }
  return undefined;
}

/** The registrable domain of a List-Id value (`Name <list.host.example>` → host.example). */
export function listIdOrg(listId: string): string {
  const id = (angleContent(listId) ?? listId).trim().toLowerCase();
  return id ? orgDomain(id.split('.').slice(-3).join('.')) : '';
}

/** Whether a Reply-To names someone at another registrable domain than From (the author). */
function authorInReplyTo(v: MailView): boolean {
  return v.reply_to.some((r) => r.org_domain !== '' && r.org_domain !== v.from.org_domain);
}

/**
 * The List-Id of a list that relays other people's mail, authenticated: what such a list explains
 * (subject tags, digests, the author's name on the list's address) is its relaying. A "list" at the
 * sender's own domain relays no one: the sender wrote all of it, and it explains nothing.
 */
export function relayingListId(email: Email, v: MailView, a: AuthResults): string {
  if (!v.list_id || !a.verified) return '';
  const org = listIdOrg(v.list_id);
  if (!org) return '';
  // the list's own domain signed: a List-Id that another domain's signature covers (the author's,
  // his mail service's, which sign whatever headers they are given) vouches for nothing
  const listSigned = a.dkim_pass_domains.some((d) => orgDomain(d) === org);
  if (org !== v.from.org_domain) return listSigned ? v.list_id : '';
  // From is the list's own address: a list's DMARC rewriting, sent to the list, the author moved
  // to Reply-To
  return listSigned &&
    listPostAddress(email) === v.from.address &&
    v.to.some((t) => t.toLowerCase() === v.from.address) &&
    authorInReplyTo(v)
    ? v.list_id
    : '';
}

/** Registrable domains a List-Unsubscribe value points to (mailto hosts and URL hosts). */
function unsubscribeOrgs(value: string): Set<string> {
  const out = new Set<string>();
  for (const part of value.slice(0, 2000).split(',', 10)) {
    const inner = (angleContent(part) ?? part).trim().toLowerCase();
    const host = inner.startsWith('mailto:')
      ? (inner.slice(7).split('?')[0]?.split('@')[1] ?? '')
      : (/^https?:\/\/([^/?#:]+)/.exec(inner)?.[1] ?? '');
    if (host) out.add(orgDomain(host));
  }
  return out;
}

/**
 * Whether a list manager or a bulk sender vouches that the message is bulk mail (which explains
 * HTML sent alone): a relaying list authenticates it; or a signature of another domain than the
 * author's (the list's, the mail service's) covers its List-Unsubscribe. A sender vouching for his
 * own mail proves nothing of it. Where the receiving hop recorded no authentication at all,
 * a bulk sender's whole shape stands in: From, the envelope sender and the List-Unsubscribe
 * address at one domain (a List-Unsubscribe added to a message sent from elsewhere points
 * elsewhere). That last case can be written by a sender whose envelope and From share a domain;
 * it is kept for the mail that nothing authenticates (docs/analyzers.md, "Evidence of legitimate
 * mail", and the forged-headers figures).
 */
export function bulkEvidence(email: Email, v: MailView, a: AuthResults): boolean {
  if (relayingListId(email, v, a)) return true;
  if (signerCovering(email, a, 'list-unsubscribe', v.from.org_domain)) return true;
  if (!nothingRecorded(a)) return false;
  const unsub = firstHeader(email, 'list-unsubscribe');
  const org = v.from.org_domain;
  if (!unsub || !org || v.return_path?.org_domain !== org) return false;
  return unsubscribeOrgs(unsub).has(org);
}

/** Whether the trusted hop verified a DKIM signature of the registrable domain `org`. */
export function orgSigned(a: AuthResults, org: string): boolean {
  return !!org && a.verified && a.dkim_pass_domains.some((d) => orgDomain(d) === org);
}

/**
 * Whether a link to the sender's registrable domain `org` can speak for the sender. Anyone can
 * write a link to any domain (the `own_link` forgery), so it counts only when that domain signed
 * the message (a DKIM pass the receiving hop recorded, as the signers of hidden_offsite_links), or
 * where the hop recorded no DKIM result at all (a receiver that checks no signatures, or only
 * SPF, as mail servers before DKIM did): nothing says the domain did not sign, and the link
 * stands in.
 */
export function ownDomainVouched(a: AuthResults, org: string): boolean {
  return !!org && (!dkimRecorded(a) || a.dkim_pass_domains.some((d) => orgDomain(d) === org));
}

/** Whether the trusted hop recorded a DKIM result (pass, fail, none …): it checks signatures. */
export function dkimRecorded(a: AuthResults): boolean {
  return a.dkim !== 'none_seen';
}

/** Whether the trusted hop recorded no authentication result at all (a receiver that checks none). */
export function nothingRecorded(a: AuthResults): boolean {
  return (
    a.spf === 'none_seen' &&
    a.dkim === 'none_seen' &&
    a.dmarc === 'none_seen' &&
    a.arc === 'none_seen'
  );
}

/** The address in a `List-Post: <mailto:list@host>` value, lower-case. */
export function listPostAddress(email: Email): string {
  const lp = firstHeader(email, 'list-post') ?? '';
  const m = /<mailto:([^>?\s]+)/i.exec(lp.slice(0, 1000));
  return m?.[1]?.toLowerCase() ?? '';
}
