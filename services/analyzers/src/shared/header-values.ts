import type { Email } from '@trawl/contracts';

/** Every value of a raw header (lower-case name), bounded. */
export function headerValues(email: Email, name: string): string[] {
  const v = email.headers.raw_headers?.[name];
  if (v === undefined) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.slice(0, 50).map((s) => (s.length > 8192 ? s.slice(0, 8192) : s));
}

export function firstHeader(email: Email, name: string): string | undefined {
  const v = email.headers.raw_headers?.[name];
  const first = Array.isArray(v) ? v[0] : v;
  if (first === undefined) return undefined;
  return first.length > 8192 ? first.slice(0, 8192) : first;
}

export interface ParsedAddress {
  address: string;
  display_name: string;
}

const ADDR_RE = /[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]{2,}/;

/** Parses one `Name <addr@host>` / `addr@host (Name)` value; the first address found wins. */
export function parseAddressHeader(value: string): ParsedAddress | undefined {
  const v = value.trim();
  const angle = /<([^<>]*)>\s*$/.exec(v) ?? /<([^<>]*@[^<>]*)>/.exec(v);
  if (angle) {
    const inner = ADDR_RE.exec(angle[1] ?? '');
    const display = v
      .slice(0, angle.index)
      .trim()
      .replace(/^"(.*)"$/s, '$1')
      .replace(/\\"/g, '"')
      .trim();
    return inner ? { address: inner[0].toLowerCase(), display_name: display } : undefined;
  }
  const m = ADDR_RE.exec(v);
  if (!m) return undefined;
  const comment = /\(([^)]*)\)/.exec(v);
  return { address: m[0].toLowerCase(), display_name: comment?.[1]?.trim() ?? '' };
}

export function domainOf(address: string | undefined): string | undefined {
  if (!address) return undefined;
  const at = address.lastIndexOf('@');
  if (at < 0) return undefined;
  const d = address
    .slice(at + 1)
    .toLowerCase()
    .replace(/[>\].\s]+$/, '');
  return d.length > 0 ? d : undefined;
}
