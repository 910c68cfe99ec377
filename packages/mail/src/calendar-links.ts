import type { FoundLinks } from './extract-urls.ts';

/**
 * The links of a calendar invitation (iCalendar, RFC 5545), read as text after unfolding its lines
 * (section 3.1: a line break followed by a space or a tab continues the line): the `URL` and
 * `ATTACH` properties (URIs, unless the attachment is inline binary), the `ALTREP` parameter (a URI
 * standing for the text), and the URLs written in `DESCRIPTION`, `LOCATION`, `SUMMARY`, `COMMENT`
 * (TEXT values, with their `\n`, `\,`, `\;` escapes undone) and `X-ALT-DESC` (an HTML description
 * that Outlook shows). One pass over at most `maxBytes` of the file.
 */
export interface CalendarLinkLimits {
  maxBytes: number;
  /** Content lines read. */
  maxLines: number;
  maxLinks: number;
}

export const CALENDAR_LINK_LIMITS: CalendarLinkLimits = {
  maxBytes: 1024 * 1024,
  maxLines: 20_000,
  maxLinks: 100,
};

const URI_PROPERTIES = new Set(['URL', 'ATTACH', 'TZURL', 'IMAGE', 'CONFERENCE']);
const TEXT_PROPERTIES = new Set(['DESCRIPTION', 'LOCATION', 'SUMMARY', 'COMMENT', 'X-ALT-DESC']);

/** Unfolds RFC 5545 lines: CRLF (or a bare LF) followed by one space or tab is removed. */
export function unfoldCalendar(text: string): string {
  return text.replace(/\r?\n[ \t]/g, '');
}

/** TEXT escapes of RFC 5545 section 3.3.11 undone. */
function unescapeText(v: string): string {
  if (!v.includes('\\')) return v;
  return v.replace(/\\([nN\\,;])/g, (_m, c: string) => (c === 'n' || c === 'N' ? '\n' : c));
}

interface ContentLine {
  name: string;
  params: Map<string, string>;
  value: string;
}

/**
 * `NAME;PARAM=v;PARAM="quoted:value":value`: the name, the parameters (upper-case names, quotes
 * removed) and the value after the first colon outside quotes. One pass over the line.
 */
function contentLine(line: string): ContentLine | undefined {
  let i = 0;
  while (i < line.length && line[i] !== ';' && line[i] !== ':') i++;
  const name = line.slice(0, i).trim().toUpperCase();
  if (name === '' || i >= line.length) return undefined;
  const params = new Map<string, string>();
  while (line[i] === ';') {
    const start = ++i;
    let quoted = false;
    let eq = -1;
    for (; i < line.length; i++) {
      const c = line[i];
      if (c === '"') quoted = !quoted;
      else if (!quoted && (c === ';' || c === ':')) break;
      else if (!quoted && c === '=' && eq < 0) eq = i;
    }
    if (eq > 0) {
      const key = line.slice(start, eq).trim().toUpperCase();
      const raw = line.slice(eq + 1, i);
      params.set(key, raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw);
    }
  }
  if (line[i] !== ':') return undefined;
  return { name, params, value: line.slice(i + 1) };
}

/** The link targets and searchable texts of an iCalendar file. */
export function calendarLinks(
  text: string,
  limits: CalendarLinkLimits = CALENDAR_LINK_LIMITS,
): FoundLinks {
  const targets = new Set<string>();
  const texts: string[] = [];
  const html: string[] = [];
  const unfolded = unfoldCalendar(
    text.length > limits.maxBytes ? text.slice(0, limits.maxBytes) : text,
  );
  let lines = 0;
  let from = 0;
  while (from < unfolded.length && lines++ < limits.maxLines) {
    let to = unfolded.indexOf('\n', from);
    if (to < 0) to = unfolded.length;
    const l = contentLine(unfolded.slice(from, to).replace(/\r$/, ''));
    from = to + 1;
    if (l === undefined) continue;
    const altrep = l.params.get('ALTREP');
    if (altrep) targets.add(altrep);
    if (URI_PROPERTIES.has(l.name)) {
      const binary =
        l.params.get('VALUE')?.toUpperCase() === 'BINARY' ||
        l.params.get('ENCODING')?.toUpperCase() === 'BASE64';
      if (!binary && l.value.trim() !== '') targets.add(l.value.trim());
    } else if (TEXT_PROPERTIES.has(l.name)) {
      const v = unescapeText(l.value);
      if (l.name === 'X-ALT-DESC' && l.params.get('FMTTYPE')?.toLowerCase() === 'text/html') {
        html.push(v);
      } else texts.push(v);
    }
    if (targets.size >= limits.maxLinks) break;
  }
  return { targets: [...targets], texts, html };
}
