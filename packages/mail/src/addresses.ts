import { domainToASCII } from 'node:url';
import { EmailAddress } from '@trawl/contracts';
import { getDomain } from 'tldts';
import { isSpaceCode } from './char-codes.ts';
import { trimEndOf } from './trim-end.ts';

/** An address split and lower-cased: local part, domain, display name. */
export interface NormalizedAddress {
  /** The address as the Email schema accepts it. */
  address: string;
  /** True when the local part had to be rewritten (quoted or exotic characters replaced by `_`). */
  lossy: boolean;
}

const LOCAL_OK = /^[A-Za-z0-9_'+\-.]+$/;
/** The host part the Email schema accepts (its address check): dotted labels, alphabetic TLD. */
const HOST_OK = /^(?:[A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/;

function isValid(address: string): boolean {
  return EmailAddress.safeParse(address).success;
}

/** Lower-cases a host, drops a trailing dot and encodes IDN labels as punycode; undefined if impossible. */
export function asciiHost(host: string): string | undefined {
  let h = host.trim().toLowerCase();
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h === '' || h.length > 253) return undefined;
  if (/^[\x00-\x7f]*$/.test(h)) return h;
  const ascii = domainToASCII(h);
  return ascii === '' ? undefined : ascii;
}

/**
 * Normalises one address so that it passes the Email schema's address check:
 *  - strips `<>`, `mailto:`, surrounding whitespace;
 *  - lower-cases the domain and encodes an IDN domain as punycode;
 *  - unquotes a quoted local part; when the local part still holds characters the schema refuses,
 *    they are replaced by `_` (`lossy: true`) so that the domain, the part that matters, is kept.
 * Answers undefined when no valid address can be made (no `@`, IP-literal or single-label domain, a
 * punycode top-level domain the schema refuses, ...).
 */
export function normalizeAddress(input: string): NormalizedAddress | undefined {
  let s = input.trim();
  if (s.startsWith('<') && s.endsWith('>')) s = s.slice(1, -1).trim();
  if (/^mailto:/i.test(s)) s = s.slice(7);
  if (s.length > 512) return undefined;
  const at = s.lastIndexOf('@');
  if (at <= 0 || at === s.length - 1) return undefined;
  let local = s.slice(0, at);
  let host = asciiHost(s.slice(at + 1).replace(/^\[(.*)\]$/, '$1'));
  if (host === undefined || !/^[a-z0-9][a-z0-9.\-_]*$/.test(host) || host.includes('..'))
    return undefined;
  let hostRewritten = false;
  if (!HOST_OK.test(host)) {
    // single-label host (`pot`, `localhost`), IP literal, punycode top-level domain: keep it visible
    // under the reserved `.invalid` TLD (RFC 2606) instead of losing the address
    host = `${trimEndOf(host.replace(/_/g, '-').replace(/^-+/, ''), '-')}.invalid`;
    if (!HOST_OK.test(host)) return undefined;
    hostRewritten = true;
  }
  if (local.length > 1 && local.startsWith('"') && local.endsWith('"')) local = local.slice(1, -1);
  const direct = `${local}@${host}`;
  if (LOCAL_OK.test(local) && isValid(direct)) {
    return { address: direct, lossy: hostRewritten || local !== s.slice(0, at) };
  }
  let clean = local
    .replace(/[^A-Za-z0-9_'+\-.]/g, '_')
    .replace(/\.{2,}/g, '.')
    .replace(/^\.+/, '');
  clean = trimEndOf(clean, ".'");
  if (clean === '') clean = '_';
  const rewritten = `${clean}@${host}`;
  return isValid(rewritten) ? { address: rewritten, lossy: true } : undefined;
}

/** The domain of an address (lower-case, punycode), or undefined when it has none. */
export function domainOfAddress(addr: string): string | undefined {
  let s = addr.trim();
  const lt = s.lastIndexOf('<');
  if (lt >= 0) {
    const gt = s.indexOf('>', lt);
    s = s.slice(lt + 1, gt > lt ? gt : undefined);
  }
  const at = s.lastIndexOf('@');
  if (at < 0 || at === s.length - 1) return undefined;
  return asciiHost(cutAtGtOrSpace(s.slice(at + 1)));
}

/**
 * `s.replace(/[>\s].*$/, '')` in linear time (the expression retries from every `>` or white space
 * up to a line break, quadratic on many of them): `.` stops at line breaks, so the match starts at
 * the last line break if there is one, else at the first `>` or white space.
 */
function cutAtGtOrSpace(s: string): string {
  for (let i = s.length - 1; i >= 0; i--) {
    const c = s.charCodeAt(i);
    if (c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029) return s.slice(0, i);
  }
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x3e /* > */ || isSpaceCode(c)) return s.slice(0, i);
  }
  return s;
}

/**
 * The registrable domain (eTLD+1, public suffix list via tldts) of a host name, URL or email address:
 * `mail.example.co.uk` → `example.co.uk`, `a@b.example.com` → `example.com`. Undefined for IPs and
 * bare suffixes.
 */
export function registrableDomain(hostOrAddress: string): string | undefined {
  const s = hostOrAddress.trim();
  const host = s.includes('@') && !s.includes('://') ? domainOfAddress(s) : s;
  if (host === undefined || host === '') return undefined;
  const ascii = asciiHost(host) ?? host;
  return getDomain(ascii, { allowPrivateDomains: false }) ?? undefined;
}
