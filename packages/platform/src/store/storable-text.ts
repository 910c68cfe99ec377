/**
 * Text the store cannot hold, made storable at one boundary (issue 28, ADR 014). PostgreSQL and
 * PGlite refuse U+0000 in `text` and in `jsonb` (the `\u0000` escape too: "unsupported Unicode
 * escape sequence"), and UTF-8 cannot hold a surrogate that is not in a pair (`jsonb` refuses its
 * escape; the driver silently turns a raw one into U+FFFD). Attackers write mail: a link
 * `?id=%00x` decoded into the evidence used to make the job's evidence unreadable as JSON, and
 * with it the campaign the job joined.
 *
 * What is stored instead is the character's escape as visible text, the same in every column and
 * on both engines: U+0000 reads back as the six characters `\u0000`, a lone surrogate as `\udXXX`.
 * Nothing is dropped, and what an analyst reads names the character the sender wrote.
 *
 * - `storableText` for a plain string (every string parameter of every query goes through it, in
 *   the SQL clients: `storableParams`);
 * - `storableJson` for JSON text (`jsonParam`, the evidence, a job's Email text): the escapes
 *   `\u0000` and lone `\udXXX` become an escaped backslash, so the text stays JSON and parses to
 *   the same visible escape.
 */

/** The characters `\uXXXX` (visible text) of the code unit `c`. */
function escapeOf(c: number): string {
  return `\\u${c.toString(16).padStart(4, '0')}`;
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

function wellFormed(s: string): boolean {
  return (s as string & { isWellFormed(): boolean }).isWellFormed();
}

/** A string PostgreSQL stores and gives back unchanged: U+0000 and lone surrogates as `\uXXXX`. */
export function storableText(s: string): string {
  if (s.indexOf('\u0000') === -1 && wellFormed(s)) return s;
  let out = '';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0 || isLow(c) || (isHigh(c) && !isLow(s.charCodeAt(i + 1)))) {
      out += s.slice(last, i) + escapeOf(c);
      last = i + 1;
    } else if (isHigh(c)) {
      i++; // a pair
    }
  }
  return out + s.slice(last);
}

/** `\u0000`, or the escape of a surrogate (a JSON text that may need `storableJson`'s loop). */
const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

function hex4(t: string, at: number): number {
  if (at + 4 > t.length) return -1;
  const h = t.slice(at, at + 4);
  return /^[0-9a-fA-F]{4}$/.test(h) ? Number.parseInt(h, 16) : -1;
}

/**
 * JSON text that PostgreSQL's jsonb reads: the escape `\u0000` and the escape of a lone surrogate
 * become `\\uXXXX` (an escaped backslash: the string then holds the visible text `\uXXXX`, as
 * `storableText` gives), a raw U+0000 or lone surrogate likewise. Linear; the common text (no
 * such escape) is returned as it is after two native scans.
 */
export function storableJson(t: string): string {
  if (t.indexOf('\u0000') === -1 && wellFormed(t) && !SUSPECT_ESCAPE.test(t)) return t;
  let out = '';
  let last = 0;
  const put = (from: number, to: number, c: number) => {
    out += `${t.slice(last, from)}\\${escapeOf(c)}`;
    last = to;
  };
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 0x5c) {
      if (t.charCodeAt(i + 1) !== 0x75) {
        i++; // `\"`, `\\`, `\n`…: the escaped character is not looked at
        continue;
      }
      const u = hex4(t, i + 2);
      if (u === 0 || isLow(u)) {
        put(i, i + 6, u);
        i += 5;
      } else if (isHigh(u)) {
        const next = t.charCodeAt(i + 6) === 0x5c && t.charCodeAt(i + 7) === 0x75;
        if (next && isLow(hex4(t, i + 8))) {
          i += 11; // an escaped pair: jsonb takes it
        } else {
          put(i, i + 6, u);
          i += 5;
        }
      } else if (u !== -1) {
        i += 5;
      }
    } else if (c === 0 || isLow(c) || (isHigh(c) && !isLow(t.charCodeAt(i + 1)))) {
      put(i, i + 1, c);
    } else if (isHigh(c)) {
      i++;
    }
  }
  return out + t.slice(last);
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * The parameters of a query as the store can hold them (both SQL clients call it on every
 * query): strings through `storableText`, the strings of an array (a `text[]`) likewise, a plain
 * object (which the drivers send as JSON) as storable JSON text. Allocates nothing when nothing
 * needs changing.
 */
export function storableParams(params: unknown[] | undefined): unknown[] | undefined {
  if (params === undefined) return undefined;
  let out: unknown[] | undefined;
  for (let i = 0; i < params.length; i++) {
    const v = params[i];
    const s = storableParam(v);
    if (s !== v) {
      out ??= params.slice();
      out[i] = s;
    }
  }
  return out ?? params;
}

function storableParam(v: unknown): unknown {
  if (typeof v === 'string') return storableText(v);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const a = storableParams(v);
    return a;
  }
  if (isPlainObject(v)) return storableJson(JSON.stringify(v));
  return v;
}
