const MIN_YEAR = 1970;
const MAX_YEAR = 2200;

function plausible(ms: number): boolean {
  if (!Number.isFinite(ms)) return false;
  const y = new Date(ms).getUTCFullYear();
  return y >= MIN_YEAR && y <= MAX_YEAR;
}

/**
 * Parses an RFC 5322 date (and the common broken variants seen in real mail: comments, missing day
 * name, two-digit years, unknown zone names after an offset, dots in the time) into ISO 8601 (UTC).
 * Undefined when the text is not a plausible date (years 1970..2200).
 */
export function parseMailDate(text: string): string | undefined {
  const s = text
    .slice(0, 200)
    .replace(/\([^)]*\)/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  // V8's lenient parser turns almost anything into a date; ask for at least a year's worth of digits
  if ((s.match(/\d/g)?.length ?? 0) < 4) return undefined;
  const candidates = [
    s,
    s.replace(/^[A-Za-z]{2,9},?\s*/, ''),
    s.replace(/([+-]\d{4})\s+[A-Za-z]{2,5}$/, '$1'),
    s.replace(/(\d{1,2})\.(\d{2})\.(\d{2})/, '$1:$2:$3'),
    s.replace(/^[A-Za-z]{2,9},?\s*/, '').replace(/\s+[A-Za-z]{2,5}$/, ' +0000'),
  ];
  for (const c of candidates) {
    const ms = Date.parse(c);
    if (plausible(ms)) return new Date(ms).toISOString();
  }
  return undefined;
}

/** The timestamp of a Received header (the text after its last `;`). */
export function receivedDate(received: string): string | undefined {
  const semi = received.lastIndexOf(';');
  if (semi < 0) return undefined;
  return parseMailDate(received.slice(semi + 1));
}
