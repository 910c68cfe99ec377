const HEX_VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX_VALUE[i.toString(16).charCodeAt(0)] = i;
  HEX_VALUE[i.toString(16).toUpperCase().charCodeAt(0)] = i;
}

/**
 * Quoted-printable decoding, byte for byte what libqp 2.1's `decode` (mailsplit's decoder) answers,
 * in linear passes over bytes instead of regexes and a per-character loop over a binary string:
 *  1. runs of spaces and tabs before CR, LF or the end are dropped;
 *  2. then `=` before CRLF, LF or the end (a soft line break) is dropped;
 *  3. then `=XX` with two hex digits becomes that byte; every other byte is kept as it is.
 */
export function decodeQuotedPrintable(src: Buffer): Buffer {
  const n = src.length;
  const out = Buffer.allocUnsafe(n);
  let w = 0;
  // 1 and 2 in one pass: what follows a `=` once step 1 has run decides whether it is a soft break
  for (let i = 0; i < n; ) {
    const c = src[i] as number;
    if (c === 61) {
      let k = i + 1;
      while (k < n && (src[k] === 32 || src[k] === 9)) k++;
      if (k === n) break; // `=` (and blanks) at the very end
      if (src[k] === 10) {
        i = k + 1;
        continue;
      }
      if (src[k] === 13) {
        // blanks between CR and LF go too (step 1): `=` CR blanks LF is a soft break
        let m = k + 1;
        while (m < n && (src[m] === 32 || src[m] === 9)) m++;
        if (src[m] === 10) {
          i = m + 1;
          continue;
        }
      }
      out[w++] = 61;
      i++;
      continue;
    }
    if (c !== 32 && c !== 9) {
      out[w++] = c;
      i++;
      continue;
    }
    let j = i + 1;
    while (j < n && (src[j] === 32 || src[j] === 9)) j++;
    const next = src[j];
    if (j < n && next !== 10 && next !== 13) while (i < j) out[w++] = src[i++] as number;
    else i = j;
  }
  // 3. =XX escapes (in place)
  const len2 = w;
  w = 0;
  for (let r = 0; r < len2; ) {
    const c = out[r] as number;
    if (c === 61 && r + 2 < len2) {
      const hi = HEX_VALUE[out[r + 1] as number] as number;
      const lo = HEX_VALUE[out[r + 2] as number] as number;
      if (hi >= 0 && lo >= 0) {
        out[w++] = (hi << 4) | lo;
        r += 3;
        continue;
      }
    }
    out[w++] = c;
    r++;
  }
  return out.subarray(0, w);
}
