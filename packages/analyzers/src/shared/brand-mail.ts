/**
 * What a brand's own mail is, beyond its From domain: the links it may carry and, for a platform
 * that sends for anyone (Google, PayPal, Meta), which of its mail is its own account mail rather
 * than what one of its users wrote.
 */
import type { Brand } from './lexicons.ts';
import { type MailView, orgDomain } from './view.ts';

/** The URLs a link carries after its host (`continue=https://…`, `U=https%3A%2F%2F…`). */
const CARRIED = /https?:\/\/([a-z0-9.-]{1,253})/g;

/**
 * Whether a URL carries another address after its host than one `owns` accepts: an open
 * redirect on a brand's domain leads anywhere, a sign-in page continuing to the brand's own page
 * (`accounts.google.com/…?continue=https://myaccount.google.com/…`) leads to the brand.
 */
export function carriesElsewhere(url: string, owns: (domain: string) => boolean): boolean {
  const at = url.indexOf('//');
  const rest = url
    .slice(at === -1 ? 0 : at + 2, 4096)
    .toLowerCase()
    .replace(/%3a/g, ':')
    .replace(/%2f/g, '/');
  if (!rest.includes('http')) return false;
  for (const m of rest.matchAll(CARRIED)) {
    const host = m[1] ?? '';
    if (!owns(orgDomain(host) || host)) return true;
  }
  return false;
}

/**
 * A platform's own account mail: sent under the brand's name alone (or its bare address), with
 * no one else to reply to. What its users write comes under their own names ("Anna (via Google
 * Drive)", "Anna via DocuSign") or with their address in Reply-To. The name is the sender's to
 * write, so this only ever explains the alarm of such mail (security alerts), never a request.
 */
export function platformOwnMail(v: MailView, brand: Brand): boolean {
  if (v.reply_to.length > 0) return false;
  const dn = v.from.display_name.trim().toLowerCase();
  if (dn === '' || dn === v.from.address) return true;
  return [...brand.names, ...brand.case_names].some((n) => n.toLowerCase() === dn);
}
