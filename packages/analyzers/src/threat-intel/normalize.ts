/**
 * One spelling per URL, host and hash, applied alike to feed entries and to what a message holds,
 * so that `HTTPS://Evil.Example:443/a/?x=1#top` in a message meets `http://evil.example/a?x=1` in a
 * feed. The scheme is dropped (a feed listing the http link of a page lists its https twin), as are
 * the fragment, a default port, a trailing slash, and percent-escapes of unreserved characters.
 */

const SCHEMES = new Set(['http:', 'https:', 'ftp:']);
const DEFAULT_PORTS = new Set(['', '80', '443', '21']);
const UNRESERVED_ESCAPE = /%([0-9A-Fa-f]{2})/g;

function normalizeEscapes(s: string): string {
  if (!s.includes('%')) return s;
  return s.replace(UNRESERVED_ESCAPE, (m, hex: string) => {
    const c = Number.parseInt(hex, 16);
    const ch = String.fromCharCode(c);
    return /[A-Za-z0-9\-._~]/.test(ch) ? ch : m.toUpperCase();
  });
}

/** The keys a URL is looked up by: the whole URL, and the URL without its query when it has one. */
export interface UrlKeys {
  full: string;
  withoutQuery?: string;
  host: string;
}

/** Normalised keys of an http(s)/ftp URL; undefined for anything else. A bare host gets `http://`. */
export function urlKeys(raw: string): UrlKeys | undefined {
  const s = raw.trim();
  if (s === '' || s.length > 4096) return undefined;
  const hasAuthority = /^[a-z][a-z0-9+.-]*:\/\//i.test(s);
  // `mailto:`, `javascript:`, `data:`: another scheme (`host:8080/x` is a host and its port)
  if (!hasAuthority && /^[a-z][a-z0-9+.-]*:(?!\d)/i.test(s)) return undefined;
  let u: URL;
  try {
    u = new URL(hasAuthority ? s : `http://${s}`);
  } catch {
    return undefined;
  }
  if (!SCHEMES.has(u.protocol) || u.hostname === '') return undefined;
  const host = u.hostname.replace(/\.$/, '');
  const port = DEFAULT_PORTS.has(u.port) ? '' : `:${u.port}`;
  let path = normalizeEscapes(u.pathname);
  if (path.endsWith('/')) path = path.replace(/\/+$/, '');
  const search = u.search === '?' ? '' : normalizeEscapes(u.search);
  const base = `${host}${port}${path}`;
  return search ? { full: base + search, withoutQuery: base, host } : { full: base, host };
}

/** The normalised key of one URL (for feed entries). */
export function normalizeUrl(raw: string): string | undefined {
  return urlKeys(raw)?.full;
}

/** Lower-case ASCII (punycode) host or canonical IP; undefined when it is not a host name. */
export function normalizeHost(raw: string): string | undefined {
  let s = raw.trim().replace(/\.$/, '');
  if (s === '' || s.length > 253 || /[\s/@]/.test(s)) return undefined;
  if (s.includes(':') && !s.startsWith('[') && !/^[^:]+:\d+$/.test(s)) s = `[${s}]`; // IPv6
  try {
    const u = new URL(`http://${s}`);
    const h = u.hostname.replace(/\.$/, '');
    return h === '' ? undefined : h;
  } catch {
    return undefined;
  }
}

export function isIpHost(host: string): boolean {
  return host.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(host);
}

const HEX_HASH = /^(?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64})$/;

/** Lower-case hex md5, sha1 or sha256; undefined for anything else. */
export function normalizeHash(raw: string): string | undefined {
  const s = raw.trim().toLowerCase();
  return HEX_HASH.test(s) ? s : undefined;
}

export function hashType(hex: string): 'md5' | 'sha1' | 'sha256' {
  return hex.length === 32 ? 'md5' : hex.length === 40 ? 'sha1' : 'sha256';
}

/**
 * The names a host is looked up by in the domain lists: itself and each parent down to its
 * registrable domain (`a.b.evil.example` → itself, `b.evil.example`, `evil.example`), never a
 * public suffix above it.
 */
export function hostLadder(host: string, registrable: string | undefined): string[] {
  if (!registrable || !(host === registrable || host.endsWith(`.${registrable}`))) return [host];
  const out = [host];
  let h = host;
  while (h !== registrable) {
    h = h.slice(h.indexOf('.') + 1);
    out.push(h);
  }
  return out;
}
