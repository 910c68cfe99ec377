/** Lower-case, accents removed, punctuation and titles dropped; "Smith, John" → "john smith". */
export function normalizeName(raw: string): string {
  let s = raw
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  s = s.replace(/\([^)]*\)|\[[^\]]*\]/g, ' '); // "(CEO)", "[External]"
  s = s.replace(/["'`\u2018\u2019\u201c\u201d]/g, '');
  const comma = /^\s*([^,]+),\s*([^,]+)$/.exec(s);
  if (comma?.[1] && comma[2] && !s.includes('@')) s = `${comma[2]} ${comma[1]}`;
  s = s.replace(/[^\p{L}\p{N}@.\s-]+/gu, ' ').replace(/[-.]/g, ' ');
  s = s.replace(/\b(mr|mrs|ms|dr|prof|herr|frau|sr|sra|m|mme)\b/g, ' ');
  return s.replace(/\s+/g, ' ').trim();
}

/** Splits `"Display Name" <addr@host>` into its parts; a bare address has no display name. */
export function parseFromHeader(value: string): {
  displayName: string;
  address: string | undefined;
} {
  const m = /^\s*(.*?)\s*<([^<>]+)>\s*$/.exec(value);
  if (!m) {
    const bare = value.trim();
    return { displayName: '', address: bare.includes('@') ? bare.toLowerCase() : undefined };
  }
  const displayName = (m[1] ?? '')
    .replace(/^"(.*)"$/, '$1')
    .replace(/\\"/g, '"')
    .trim();
  return { displayName, address: m[2]?.trim().toLowerCase() };
}
