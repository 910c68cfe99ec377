import { decodeEntities } from './html-entities.ts';

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

const TAG_OPEN = /<(\/?)([a-zA-Z][a-zA-Z0-9:-]{0,62})/y;

function convert(html: string): string {
  const out: string[] = [];
  let outLen = 0;
  const push = (s: string): void => {
    out.push(s);
    outLen += s.length;
  };
  const n = html.length;
  let i = 0;
  while (i < n && outLen < HTML_TO_TEXT_MAX_CHARS * 2) {
    const lt = html.indexOf('<', i);
    if (lt < 0) {
      push(decodeEntities(html.slice(i)));
      break;
    }
    if (lt > i) push(decodeEntities(html.slice(i, lt)));
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      i = end < 0 ? n : end + 3;
      continue;
    }
    TAG_OPEN.lastIndex = lt;
    const m = TAG_OPEN.exec(html);
    if (m === null) {
      if (html[lt + 1] === '!' || html[lt + 1] === '?') {
        const gt = html.indexOf('>', lt);
        i = gt < 0 ? n : gt + 1;
        continue;
      }
      push('<');
      i = lt + 1;
      continue;
    }
    const gt = html.indexOf('>', lt);
    if (gt < 0) break;
    const name = (m[2] as string).toLowerCase();
    const closing = m[1] === '/';
    i = gt + 1;
    if (!closing && SKIP_CONTENT.has(name) && html[gt - 1] !== '/') {
      const re = new RegExp(`</${name}\\s*>`, 'gi');
      re.lastIndex = i;
      const end = re.exec(html);
      i = end === null ? n : end.index + end[0].length;
      continue;
    }
    if (name === 'li' && !closing) push('\n- ');
    else if (name === 'td' || name === 'th') push(' ');
    else if (BLOCK.has(name)) push('\n');
  }
  let text = out.join('');
  text = text
    .replace(/[\u200b-\u200d\u2060\ufeff\u00ad]/g, '')
    .replace(/[ \t\f\v\u00a0\u2002\u2003\u2009\r]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{2,}/g, '\n')
    .trim();
  return text.length > HTML_TO_TEXT_MAX_CHARS ? text.slice(0, HTML_TO_TEXT_MAX_CHARS) : text;
}
