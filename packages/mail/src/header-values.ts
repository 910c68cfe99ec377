import type { Email } from '@trawl/contracts';

/** Every value of a raw header (lower-case name), bounded (50 values of 8192 characters). */
export function headerValues(email: Email, name: string): string[] {
  const v = email.headers.raw_headers?.[name];
  if (v === undefined) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.slice(0, 50).map((s) => (s.length > 8192 ? s.slice(0, 8192) : s));
}

/** The first value of a raw header (lower-case name), bounded (8192 characters). */
export function firstHeader(email: Email, name: string): string | undefined {
  const v = email.headers.raw_headers?.[name];
  const first = Array.isArray(v) ? v[0] : v;
  if (first === undefined) return undefined;
  return first.length > 8192 ? first.slice(0, 8192) : first;
}
