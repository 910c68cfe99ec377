/** htmlToText (src/html-to-text.ts) before the CPU work of bench:mail --urls: the reference of the differential tests. */
import { decodeEntities } from '../../src/html-entities.ts';
import { lowerName } from './legacy-html-tags.ts';

/** Elements whose content is never shown as text. */
const SKIP_CONTENT = new Set(['script', 'style', 'title', 'template', 'xml']);
const BLOCK = new Set(
  'p div br tr table tbody thead tfoot ul ol h1 h2 h3 h4 h5 h6 blockquote hr section article header footer center form address pre dl dt dd nav aside main fieldset legend caption figure figcaption body html'.split(
    ' ',
  ),
);
/** Longest output, in characters. */
export const HTML_TO_TEXT_MAX_CHARS = 1_000_000;

/**
 * Converts HTML to readable plain text: drops comments, script/style/title/template contents and every
 * tag, turns block elements and `<br>` into line breaks and list items into `- ` lines, decodes
 * character references, removes zero-width characters and collapses white space. Linear time, no
 * dependency; output bounded by HTML_TO_TEXT_MAX_CHARS.
 */
export function htmlToText(html: string): string {
  // the parser (body_text of an HTML-only message) and the analyzers' view convert the same body:
  // remember the last conversion
  if (html === last.html) return last.text;
  const text = convert(html);
  last = { html, text };
  return text;
}

let last = { html: '', text: '' };

const TAG_NAME = /[a-zA-Z][a-zA-Z0-9:-]{0,62}/y;
/** Longest element name this conversion tells apart (`blockquote`, `figcaption`). */
const MAX_KNOWN_NAME = 10;
/** By name length, a bit per first letter of the elements this conversion tells apart. */
const KNOWN_SHAPES = new Array<number>(MAX_KNOWN_NAME + 1).fill(0);
for (const name of [...SKIP_CONTENT, ...BLOCK, 'li', 'td', 'th']) {
  KNOWN_SHAPES[name.length] =
    (KNOWN_SHAPES[name.length] as number) | (1 << (name.charCodeAt(0) - 0x61));
}

/** The white space the clean-up collapses, but for the line break. */
function isCollapsedSpace(c: number): boolean {
  return (
    c === 0x20 ||
    c === 0x09 ||
    c === 0x0d ||
    c === 0x0c ||
    c === 0x0b ||
    c === 0xa0 ||
    c === 0x2002 ||
    c === 0x2003 ||
    c === 0x2009
  );
}

/** `</name\s*>` for each SKIP_CONTENT element, compiled once. */
const SKIP_END = new Map([...SKIP_CONTENT].map((n) => [n, new RegExp(`</${n}\\s*>`, 'gi')]));

function isLetter(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

function convert(html: string): string {
  const out: string[] = [];
  let outLen = 0;
  const n = html.length;
  let i = 0;
  while (i < n && outLen < HTML_TO_TEXT_MAX_CHARS * 2) {
    const lt = html.indexOf('<', i);
    if (lt < 0) {
      const s = decodeEntities(html.slice(i));
      out.push(s);
      outLen += s.length;
      break;
    }
    if (lt > i) {
      // white space alone between tags (indentation) stands as one character: the clean-up
      // below turns a run into a line break or a space only by whether it holds a line break
      let k = i;
      let newline = false;
      for (; k < lt; k++) {
        const ch = html.charCodeAt(k);
        if (ch === 0x0a) newline = true;
        else if (!isCollapsedSpace(ch)) break;
      }
      if (k === lt) {
        out.push(newline ? '\n' : ' ');
        outLen += lt - i;
      } else {
        const s = decodeEntities(html.slice(i, lt));
        out.push(s);
        outLen += s.length;
      }
    }
    // in bounds: an index past the end would make the optimised code bail out once
    const c = lt + 1 < n ? html.charCodeAt(lt + 1) : 0;
    if (c === 0x21 /* ! */ && html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      i = end < 0 ? n : end + 3;
      continue;
    }
    const closing = c === 0x2f; /* / */
    const nameStart = closing ? lt + 2 : lt + 1;
    if (nameStart >= n || !isLetter(html.charCodeAt(nameStart))) {
      if (c === 0x21 || c === 0x3f /* ? */) {
        const gt = html.indexOf('>', lt);
        i = gt < 0 ? n : gt + 1;
        continue;
      }
      out.push('<');
      outLen += 1;
      i = lt + 1;
      continue;
    }
    const gt = html.indexOf('>', lt);
    if (gt < 0) break;
    TAG_NAME.lastIndex = nameStart;
    TAG_NAME.test(html);
    const nameEnd = TAG_NAME.lastIndex;
    // only names shaped like a known element (length, first letter) are looked up
    const len = nameEnd - nameStart;
    const name =
      len <= MAX_KNOWN_NAME &&
      ((KNOWN_SHAPES[len] as number) & (1 << ((html.charCodeAt(nameStart) | 0x20) - 0x61))) !== 0
        ? lowerName(html, nameStart, nameEnd)
        : '';
    i = gt + 1;
    if (!closing && html.charCodeAt(gt - 1) !== 0x2f) {
      const skipEnd = SKIP_END.get(name);
      if (skipEnd !== undefined) {
        skipEnd.lastIndex = i;
        const end = skipEnd.exec(html);
        i = end === null ? n : end.index + end[0].length;
        continue;
      }
    }
    if (name === 'li') {
      if (!closing) {
        out.push('\n- ');
        outLen += 3;
      }
    } else if (name === 'td' || name === 'th') {
      out.push(' ');
      outLen += 1;
    } else if (BLOCK.has(name)) {
      out.push('\n');
      outLen += 1;
    }
  }
  // white space: a run with a line break becomes one line break, any other run one space (only
  // the runs that change are matched)
  const text = out
    .join('')
    .replace(/[\u200b-\u200d\u2060\ufeff\u00ad]/g, '')
    .replace(/[ \t\f\v\u00a0\u2002\u2003\u2009\r]{2,}|[\t\f\v\u00a0\u2002\u2003\u2009\r]/g, ' ')
    .replace(/ ?\n[ \n]+| \n/g, '\n')
    .trim();
  return text.length > HTML_TO_TEXT_MAX_CHARS ? text.slice(0, HTML_TO_TEXT_MAX_CHARS) : text;
}
