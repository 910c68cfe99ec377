import type { Email } from '@trawl/contracts';
import { type AuthResults, readAuthResults } from '../shared/auth-results.ts';
import { addressIn, firstHeader } from '../shared/header-values.ts';
import type { Lexicons } from '../shared/lexicons.ts';
import type { Finding } from '../shared/score.ts';
import {
  listIdOrg,
  listPostAddress,
  nothingRecorded,
  orgSigned,
  relayingListId,
  signerCovering,
} from '../shared/signed-headers.ts';
import { blankSpans, type MailView, orgDomain, viewOf } from '../shared/view.ts';
import type { HeadersSettings } from './settings.ts';

/**
 * What every header technique reads, built once per message: the normalised view, the settings and
 * lexicons, the authentication results of the trusted hop, and the facts several techniques share.
 */
export interface HeaderContext {
  email: Email;
  v: MailView;
  settings: HeadersSettings;
  w: HeadersSettings['weights'];
  lex: Lexicons;
  /** Authentication results of the trusted hop (authserv_ids, else the nearest one). */
  auth: AuthResults;
  /** Registrable domain of the From address. */
  fromOrg: string;
  /** The From display name ('' when none). */
  dn: string;
  /** Org domains that take replies and bounces for the author: a list's, a signing Sender's. */
  relays: Set<string>;
  /**
   * The List-Id when the list's domain authenticates the message (see authenticatedListId), else
   * ''. What a list explains (subject tags, rewritten senders, digests) counts only then.
   */
  authList: string;
  /** The list's domain when a mailing list rewrote From (DMARC mitigation), else undefined. */
  list: string | undefined;
  /**
   * The domain that re-signed a list's message without rewriting From: its DKIM signature covers
   * the List-Id and verified at the trusted hop, else undefined (see listSigner).
   */
  listSigner: string | undefined;
  /**
   * The address a service sends on behalf of: shown in the display name and the Reply-To both
   * ("Per conto di: anna@example.it" <posta-certificata@provider.it>, Reply-To anna@example.it);
   * '' otherwise. Display name and Reply-To then say one fact, and count as one.
   */
  onBehalf: string;
  /** The first From header as written. */
  fromHeader: string;
  /** fromHeader without its quoted parts (an address in a quoted name is not the sender's). */
  unquoted: string;
  /** Registrable domains of the visible recipients. */
  recipientDomains: Set<string>;
  /** Visible recipients, lower-case. */
  to: string[];
  /** The subject, lower-case, with [bracketed] tags blanked. */
  subj: string;
  /** The findings of the techniques run before this one (read only). */
  found: readonly Finding[];
}

/**
 * What `s.replace(/\[[^\]]*\]/g, ' ')` answers: each `[…]` (to the next `]`) made one space. A
 * scan with indexOf; the regex read the rest of the value again at every `[` without a `]`.
 */
export function blankBrackets(s: string): string {
  return blankSpans(s, '[', ']');
}

/**
 * Org domains that legitimately receive replies and bounces for the author: a mailing list's (its
 * List-Id's domain, unless that is a free-mail domain anyone can sign up at: a list's replies and
 * bounces go to the list, which is all a List-Id accounts for, so it needs no authentication), and
 * the Sender header's (RFC 5322: the agent that sent for the author) when that domain signed.
 */
function relayDomains(v: MailView, a: AuthResults, lex: Lexicons): Set<string> {
  const s = new Set<string>();
  const lid = listIdOrg(v.list_id);
  if (lid && !lex.freeMail.has(lid)) s.add(lid);
  if (v.sender_header && orgSigned(a, v.sender_header.org_domain))
    s.add(v.sender_header.org_domain);
  return s;
}

/**
 * A mailing list's DMARC mitigation: From rewritten to the list's own address (the List-Post
 * address, or an address of the List-Id's domain), the author moved to Reply-To. Recognised only
 * when the trusted hop's authentication does not contradict it: when it recorded DKIM results, the
 * list's domain must have signed (or the ARC chain through the list must hold), and DMARC must not
 * have failed. Returns the list's domain. Everything in it is written by the sender, so it only
 * explains the Reply-To (group `reply_to`, floor 0), never lowers a score by itself.
 */
function listRewrite(email: Email, v: MailView, a: AuthResults): string | undefined {
  if (!v.list_id || !v.from.address) return undefined;
  const listOrg = listIdOrg(v.list_id);
  const post = listPostAddress(email);
  // the whole shape of the rewriting: From is the list's own address (its posting address, or one
  // of the List-Id's domain), which the list sent the message to, and the author is in Reply-To
  const fromIsList = post !== '' ? v.from.address === post : v.from.org_domain === listOrg;
  if (!fromIsList || !v.to.some((t) => t.toLowerCase() === v.from.address)) return undefined;
  if (!v.reply_to.some((r) => r.address !== '' && r.address !== v.from.address)) return undefined;
  if (a.dmarc === 'fail') return undefined;
  // the list's own domain signed what it sent (verified at the trusted hop), or a trusted sealer's
  // ARC chain through the list holds, or (where the receiving hop recorded no authentication at
  // all) it came from the list's own bounce address: otherwise it is only what the sender wrote
  if (orgSigned(a, v.from.org_domain) || a.arc_trusted) return v.from.org_domain;
  if (nothingRecorded(a) && listOrg !== '' && v.return_path?.org_domain === listOrg)
    return v.from.org_domain;
  return undefined;
}

/**
 * A mailing list that relays the author's From unchanged breaks the author's DKIM (it adds a
 * footer or a subject tag) and so DMARC; a list operator that signs what it sends covers its own
 * List-Id with that signature. Returns the signing domain when the trusted hop verified a DKIM
 * signature of the List-Id's own domain (not the author's) whose signed headers include List-Id. What it
 * explains is only the author's broken authentication (group `auth`, floor 0), and never for a
 * From domain with standing (a brand's or the organisation's own), which is what a spoofer writes.
 */
function listSigner(email: Email, v: MailView, a: AuthResults): string | undefined {
  const org = listIdOrg(v.list_id);
  if (!org || org === v.from.org_domain) return undefined;
  const d = signerCovering(email, a, 'list-id', v.from.org_domain);
  // the list's own domain: another's signature (the author's mail service) vouches for nothing
  return d && orgDomain(d) === org ? d : undefined;
}

/** The address shown in the display name when a Reply-To is that same address, else ''. */
function onBehalfOf(v: MailView): string {
  const dn = v.from.display_name;
  if (!dn || v.reply_to.length === 0) return '';
  const shown = addressIn(dn)?.[0].toLowerCase();
  if (!shown || shown === v.from.address) return '';
  return v.reply_to.some((r) => r.address === shown) ? shown : '';
}

/** Registrable domains of the visible recipients (the mailbox the message was delivered to). */
function recipientOrgs(v: MailView): Set<string> {
  const s = new Set<string>();
  for (const r of v.to.slice(0, 10)) {
    const d = orgDomain(r.split('@')[1]?.toLowerCase() ?? '');
    if (d.includes('.')) s.add(d);
  }
  return s;
}

/** The context of one message; `found` is the list the techniques' findings are appended to. */
export function headerContext(
  email: Email,
  settings: HeadersSettings,
  lex: Lexicons,
  found: readonly Finding[],
): HeaderContext {
  const v = viewOf(email);
  const auth =
    settings.authserv_ids.length || settings.trusted_arc_sealers.length
      ? readAuthResults(email, settings.authserv_ids, { arcSealers: settings.trusted_arc_sealers })
      : v.auth;
  const fromHeader = firstHeader(email, 'from') ?? '';
  const authList = relayingListId(email, v, auth);
  return {
    email,
    v,
    settings,
    w: settings.weights,
    lex,
    auth,
    fromOrg: v.from.org_domain,
    dn: v.from.display_name,
    relays: relayDomains(v, auth, lex),
    authList,
    list: listRewrite(email, v, auth),
    listSigner: listSigner(email, v, auth),
    onBehalf: onBehalfOf(v),
    fromHeader,
    unquoted: fromHeader.replace(/"[^"]*"/g, ''),
    recipientDomains: recipientOrgs(v),
    to: v.to.map((x) => x.toLowerCase()),
    subj: blankBrackets(v.subject.toLowerCase()),
    found,
  };
}
