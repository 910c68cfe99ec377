import type { Email } from '@trawl/contracts';
import { type AuthResults, readAuthResults } from '../shared/auth-results.ts';
import { firstHeader, headerValues } from '../shared/header-values.ts';
import type { Lexicons } from '../shared/lexicons.ts';
import type { Finding } from '../shared/score.ts';
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
  /** Org domains that relay for the author: the List-Id's, the Sender header's. */
  relays: Set<string>;
  /** The list's domain when a mailing list rewrote From (DMARC mitigation), else undefined. */
  list: string | undefined;
  /**
   * The domain that re-signed a list's message without rewriting From: its DKIM signature covers
   * the List-Id and verified at the trusted hop, else undefined (see listSigner).
   */
  listSigner: string | undefined;
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
 * What `/<([^>]+)>/.exec(s)?.[1]` answers: the text between the first `<` that is followed (not
 * at once) by a `>`, and that `>`. A scan with indexOf; the regex retried the rest of the value
 * at every `<` (quadratic on a value of many `<`).
 */
export function angleContent(s: string): string | undefined {
  for (let lt = s.indexOf('<'); lt !== -1; lt = s.indexOf('<', lt + 1)) {
    const gt = s.indexOf('>', lt + 1);
    if (gt === -1) return undefined;
    if (gt > lt + 1) return s.slice(lt + 1, gt);
  }
  return undefined;
}

/**
 * What `s.replace(/\[[^\]]*\]/g, ' ')` answers: each `[…]` (to the next `]`) made one space. A
 * scan with indexOf; the regex read the rest of the value again at every `[` without a `]`.
 */
export function blankBrackets(s: string): string {
  return blankSpans(s, '[', ']');
}

/** Org domains that legitimately relay for the author: mailing lists, the Sender header. */
function relayDomains(v: MailView): Set<string> {
  const s = new Set<string>();
  const lid = angleContent(v.list_id) ?? v.list_id;
  if (lid) s.add(orgDomain(lid.split('.').slice(-3).join('.')));
  if (v.sender_header) s.add(v.sender_header.org_domain);
  return s;
}

/** The address in a `List-Post: <mailto:list@host>` value, lower-case. */
function listPostAddress(email: Email): string {
  const lp = firstHeader(email, 'list-post') ?? '';
  const m = /<mailto:([^>?\s]+)/i.exec(lp.slice(0, 1000));
  return m?.[1]?.toLowerCase() ?? '';
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
  const lid = (angleContent(v.list_id) ?? v.list_id).trim().toLowerCase();
  const post = listPostAddress(email);
  const listOrg = orgDomain(post ? (post.split('@')[1] ?? '') : lid);
  const fromIsList =
    (post !== '' && v.from.address === post) ||
    (listOrg !== '' && (v.from.org_domain === listOrg || orgDomain(lid) === v.from.org_domain));
  if (!fromIsList) return undefined;
  if (a.dmarc === 'fail') return undefined;
  if (a.dkim !== 'none_seen' || a.arc !== 'none_seen') {
    const signed = a.dkim_pass_domains.some((d) => orgDomain(d) === v.from.org_domain);
    if (!signed && a.arc !== 'pass') return undefined;
  }
  return v.from.org_domain;
}

/** A `tag=value` of a DKIM-Signature value, lower-case, folding white space removed. */
function dkimTag(sig: string, tag: string): string {
  for (const part of sig.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim().toLowerCase() === tag)
      return part
        .slice(eq + 1)
        .replace(/\s+/g, '')
        .toLowerCase();
  }
  return '';
}

/**
 * A mailing list that relays the author's From unchanged breaks the author's DKIM (it adds a
 * footer or a subject tag) and so DMARC; a list operator that signs what it sends covers its own
 * List-Id with that signature. Returns the signing domain when the trusted hop verified a DKIM
 * signature of a domain other than the author's whose signed headers include List-Id. What it
 * explains is only the author's broken authentication (group `auth`, floor 0), and never for a
 * From domain with standing (a brand's or the organisation's own), which is what a spoofer writes.
 */
function listSigner(email: Email, v: MailView, a: AuthResults): string | undefined {
  if (!v.list_id || !a.verified || a.dkim_pass_domains.length === 0) return undefined;
  for (const sig of headerValues(email, 'dkim-signature').slice(0, 10)) {
    const d = dkimTag(sig, 'd');
    if (!d || orgDomain(d) === v.from.org_domain) continue;
    if (!a.dkim_pass_domains.some((p) => p === d || p.endsWith(`.${d}`))) continue;
    if (dkimTag(sig, 'h').split(':').includes('list-id')) return d;
  }
  return undefined;
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
  const auth = settings.authserv_ids.length
    ? readAuthResults(email, settings.authserv_ids)
    : v.auth;
  const fromHeader = firstHeader(email, 'from') ?? '';
  return {
    email,
    v,
    settings,
    w: settings.weights,
    lex,
    auth,
    fromOrg: v.from.org_domain,
    dn: v.from.display_name,
    relays: relayDomains(v),
    list: listRewrite(email, v, auth),
    listSigner: listSigner(email, v, auth),
    fromHeader,
    unquoted: fromHeader.replace(/"[^"]*"/g, ''),
    recipientDomains: recipientOrgs(v),
    to: v.to.map((x) => x.toLowerCase()),
    subj: blankBrackets(v.subject.toLowerCase()),
    found,
  };
}
