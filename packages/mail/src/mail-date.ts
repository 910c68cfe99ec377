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
  if (!hasDigits(s, 4)) return undefined;
  for (let variant = 0; variant < VARIANTS; variant++) {
    const ms = Date.parse(dateVariant(s, variant));
    if (plausible(ms)) return new Date(ms).toISOString();
  }
  return undefined;
}

function hasDigits(s: string, n: number): boolean {
  let seen = 0;
  for (let i = 0; i < s.length && seen < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) seen++;
  }
  return seen >= n;
}

const VARIANTS = 5;

/** The spellings of a date tried in turn (made one at a time: the first one usually parses). */
function dateVariant(s: string, variant: number): string {
  switch (variant) {
    case 0:
      return s;
    case 1:
      return s.replace(/^[A-Za-z]{2,9},?\s*/, '');
    case 2:
      return s.replace(/([+-]\d{4})\s+[A-Za-z]{2,5}$/, '$1');
    case 3:
      return s.replace(/(\d{1,2})\.(\d{2})\.(\d{2})/, '$1:$2:$3');
    default:
      return s.replace(/^[A-Za-z]{2,9},?\s*/, '').replace(/\s+[A-Za-z]{2,5}$/, ' +0000');
  }
}

/** The timestamp of a Received header (the text after its last `;`). */
export function receivedDate(received: string): string | undefined {
  const semi = received.lastIndexOf(';');
  if (semi < 0) return undefined;
  return parseMailDate(received.slice(semi + 1));
}
