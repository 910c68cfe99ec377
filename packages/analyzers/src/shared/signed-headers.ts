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
export function dkimTag(sig: string, tag: string): string {
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

/**
 * The List-Id, when the list's domain authenticates the message: a signature the trusted hop
 * verified covers the List-Id, or the list's own domain signed it. '' otherwise (no List-Id, or
 * one anybody could have written).
 */
export function authenticatedListId(email: Email, listId: string, a: AuthResults): string {
  if (!listId || !a.verified) return '';
  const org = listIdOrg(listId);
  if (org && a.dkim_pass_domains.some((d) => orgDomain(d) === org)) return listId;
  return signerCovering(email, a, 'list-id') ? listId : '';
}

/**
 * Whether the message's List-Unsubscribe (a bulk sender's or a list's) is vouched for: a verified
 * DKIM signature covers it, as RFC 8058 asks of bulk mail, or the list itself is authenticated.
 */
export function authenticatedBulk(email: Email, listId: string, a: AuthResults): boolean {
  if (authenticatedListId(email, listId, a)) return true;
  return signerCovering(email, a, 'list-unsubscribe') !== undefined;
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
 * Whether what a message's list or bulk headers say can be believed (see listEvidence): a
 * signature covers them; or, where the receiving hop recorded no authentication at all, a list's
 * whole shape, or a bulk sender's: From, the envelope sender and the List-Unsubscribe address all
 * at one domain (a List-Unsubscribe added to someone else's message points elsewhere).
 */
export function bulkEvidence(email: Email, v: MailView, a: AuthResults): boolean {
  if (authenticatedBulk(email, v.list_id, a) || listEvidence(email, v, a)) return true;
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

/**
 * The List-Id, when what it says of the message can be believed: the list's domain authenticates
 * the message (authenticatedListId); or, where the receiving hop recorded no authentication at all
 * (nothing can be authenticated there), the message has the whole shape of a list's: From is the
 * list's own posting address (List-Post, a list's DMARC rewriting), or the author's message came
 * from the list's own bounce address (Return-Path and Sender at the List-Id's domain). A List-Id
 * added to a message that did not come through that list has neither. '' otherwise.
 */
export function listEvidence(email: Email, v: MailView, a: AuthResults): string {
  if (!v.list_id) return '';
  if (authenticatedListId(email, v.list_id, a)) return v.list_id;
  if (!nothingRecorded(a)) return '';
  const post = listPostAddress(email);
  if (post !== '' && v.from.address === post) return v.list_id;
  // every list manager sends from its own bounce address: the envelope sender (and the Sender
  // header, when there is one) at the list's own domain
  const org = listIdOrg(v.list_id);
  const rp = v.return_path?.org_domain ?? '';
  const sender = v.sender_header?.org_domain ?? org;
  return org !== '' && rp === org && sender === org && v.from.org_domain !== org ? v.list_id : '';
}
