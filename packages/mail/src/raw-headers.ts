import { headerLineValue } from './header-text.ts';

/** One header line of a message: its key and the line as written. */
export interface HeaderLine {
  key: string;
  line: string;
}

/** Bounds of reading a message's header block. */
export interface RawHeaderLimits {
  /** Characters kept of one header value. */
  maxValueChars: number;
  /** Values kept of one header name (e.g. Received). */
  maxValuesPerName: number;
  /** Distinct header names kept. */
  maxNames: number;
  /** Characters kept over all names and values. */
  maxTotalChars: number;
}

/** The default bounds of reading a header block. */
export const DEFAULT_RAW_HEADER_LIMITS: RawHeaderLimits = {
  maxValueChars: 8192,
  maxValuesPerName: 100,
  maxNames: 300,
  maxTotalChars: 256 * 1024,
};

/** Key under which the parser records what it changed or dropped (see docs/mail.md). */
export const PARSER_NOTES_HEADER = 'x-trawl-parser-notes';

/** A header block decoded: its lines, and what was dropped. */
export interface DecodedHeaders {
  /** name → values in message order (bounded). */
  byName: Map<string, string[]>;
  truncated: boolean;
}

const HEADER_NAME = /^[!-9;-~]{1,100}$/;

/** Decodes the header lines of a message, bounded by `limits`; repeated names keep every value. */
export function decodeHeaders(
  lines: readonly HeaderLine[],
  limits: RawHeaderLimits = DEFAULT_RAW_HEADER_LIMITS,
): DecodedHeaders {
  const byName = new Map<string, string[]>();
  let total = 0;
  let truncated = false;
  for (const { key, line } of lines) {
    const name = key.trim().toLowerCase();
    if (!HEADER_NAME.test(name) || name === '__proto__' || name === PARSER_NOTES_HEADER) {
      truncated ||= name !== PARSER_NOTES_HEADER;
      continue;
    }
    let values = byName.get(name);
    if (values === undefined) {
      if (byName.size >= limits.maxNames) {
        truncated = true;
        continue;
      }
      values = [];
      byName.set(name, values);
    }
    if (values.length >= limits.maxValuesPerName || total >= limits.maxTotalChars) {
      truncated = true;
      continue;
    }
    const rawSlice =
      line.length > limits.maxValueChars * 4 ? line.slice(0, limits.maxValueChars * 4) : line;
    let value = headerLineValue(rawSlice);
    if (value.length > limits.maxValueChars || rawSlice !== line) {
      value = value.slice(0, limits.maxValueChars);
      truncated = true;
    }
    if (total + value.length + name.length > limits.maxTotalChars) {
      value = value.slice(0, Math.max(0, limits.maxTotalChars - total - name.length));
      truncated = true;
    }
    total += value.length + name.length;
    values.push(value);
  }
  return { byName, truncated };
}

/** The Email's `raw_headers`: single values as strings, repeated names as arrays. */
export function toRawHeaders(
  byName: Map<string, string[]>,
  notes: readonly string[],
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, values] of byName) {
    if (values.length === 0) continue;
    out[name] = values.length === 1 ? (values[0] as string) : values;
  }
  if (notes.length > 0) out[PARSER_NOTES_HEADER] = [...notes];
  return out;
}
