import { decodeEntities } from '@trawl/mail';

/**
 * The HTML of the message view made inert (issue 16, docs/investigation.md). One left-to-right scan
 * (no backtracking expression: every character is looked at a bounded number of times) rebuilds the
 * document from an allow-list: only the elements of ALLOWED, only the attributes of ATTRIBUTES,
 * every attribute value re-escaped; everything else is dropped.
 *
 * - scripts, styles, frames, objects, SVG, MathML, templates, text areas and selects go with their content
 *   (DROP_WITH_CONTENT); other unknown elements (`html`, `body`, `form`, `base`, `meta`, `link`, …)
 *   lose their tags and keep their text;
 * - no event handler (`on*`), no `srcset`, `background`, `action`, `formaction`, `id`, `name`;
 * - a link keeps its text; its target moves to `data-trawl-href` (shown, never followed);
 * - an image keeps `src` only as a `data:image/(png|gif|jpeg|webp);base64,` URI (or a `cid:` part of
 *   the message, inlined as one); any other source moves to `data-trawl-src` (never loaded);
 * - a `style` attribute keeps only declarations without `url(`, `image-set(`, `expression`,
 *   `@import`, `behavior`, `binding`, `javascript:`, CSS escapes or comments;
 * - comments (`<!-- … -->`, `<!…>`, `<?…>`) are removed: a nested `<!--` ends with the first `-->`,
 *   and what follows is text, escaped.
 *
 * The answer is JSON: a console renders it in a sandboxed iframe (no allow-scripts) with CSP
 * `default-src 'none'; style-src 'unsafe-inline'; img-src data:` as a second wall.
 */
export interface SanitizeOptions {
  /** `cid:` references the message itself holds: content id (without `<>`) → data: URI. */
  inlineImages?: ReadonlyMap<string, string>;
  /** Longest HTML read (the rest is dropped). */
  maxChars?: number;
}

const ALLOWED = new Set([
  'a',
  'abbr',
  'address',
  'article',
  'aside',
  'b',
  'bdi',
  'bdo',
  'big',
  'blockquote',
  'br',
  'caption',
  'center',
  'cite',
  'code',
  'col',
  'colgroup',
  'dd',
  'del',
  'dfn',
  'div',
  'dl',
  'dt',
  'em',
  'figcaption',
  'figure',
  'font',
  'footer',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'i',
  'img',
  'ins',
  'kbd',
  'li',
  'main',
  'mark',
  'nav',
  'ol',
  'p',
  'pre',
  'q',
  's',
  'samp',
  'section',
  'small',
  'span',
  'strike',
  'strong',
  'sub',
  'sup',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'tt',
  'u',
  'ul',
  'wbr',
]);

const VOID = new Set(['br', 'col', 'hr', 'img', 'wbr']);

/** Elements removed with everything up to their end tag. */
const DROP_WITH_CONTENT = new Set([
  'script',
  'style',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'noscript',
  'noembed',
  'noframes',
  'template',
  'title',
  'svg',
  'math',
  'textarea',
  'select',
  'xmp',
  'audio',
  'video',
  'canvas',
  'head',
]);

/** Attributes kept (values re-escaped); `href`, `src`, `style` are handled apart. */
const ATTRIBUTES = new Set([
  'align',
  'alt',
  'bgcolor',
  'border',
  'cellpadding',
  'cellspacing',
  'class',
  'color',
  'colspan',
  'dir',
  'face',
  'height',
  'lang',
  'rowspan',
  'size',
  'span',
  'start',
  'summary',
  'title',
  'type',
  'valign',
  'width',
]);

const MAX_ATTR_CHARS = 4096;
const DATA_IMAGE = /^data:image\/(?:png|gif|jpeg|webp);base64,[A-Za-z0-9+/=\s]*$/;
/** Substrings that make a CSS declaration unsafe (looked up in its lower-cased, decoded text). */
const CSS_BANNED = [
  'url(',
  'image-set(',
  'expression',
  '@import',
  'behavior',
  'binding',
  'javascript:',
  '\\',
  '/*',
  '<',
  '&',
];

function escapeAttr(v: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    let r: string | undefined;
    if (c === 0x26) r = '&amp;';
    else if (c === 0x22) r = '&quot;';
    else if (c === 0x3c) r = '&lt;';
    else if (c === 0x3e) r = '&gt;';
    else if (c === 0x60) r = '&#96;';
    if (r !== undefined) {
      out += v.slice(last, i) + r;
      last = i + 1;
    }
  }
  return last === 0 ? v : out + v.slice(last);
}

function escapeText(v: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c === 0x3c || c === 0x3e) {
      out += v.slice(last, i) + (c === 0x3c ? '&lt;' : '&gt;');
      last = i + 1;
    }
  }
  return last === 0 ? v : out + v.slice(last);
}

/** The style declarations without a remote load, script or escape; '' when none is left. */
export function sanitizeStyle(style: string): string {
  const kept: string[] = [];
  for (const decl of decodeEntities(style).split(';')) {
    const d = decl.trim();
    if (!d) continue;
    const lower = d.toLowerCase();
    if (CSS_BANNED.some((b) => lower.includes(b))) continue;
    if (!lower.includes(':')) continue;
    kept.push(d);
  }
  return kept.join('; ');
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
}

function isNameStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

interface Attr {
  name: string;
  value: string;
}

/**
 * Reads a start or end tag's name and attributes from `i` (just after `<` or `</`); answers where
 * the tag ends (just after `>`), or -1 when it never does.
 */
function readTag(s: string, i: number): { name: string; attrs: Attr[]; end: number } {
  const n = s.length;
  let j = i;
  while (j < n && !isSpace(s.charCodeAt(j)) && s[j] !== '>' && s[j] !== '/') j++;
  const name = s.slice(i, j).toLowerCase();
  const attrs: Attr[] = [];
  while (j < n) {
    const c = s.charCodeAt(j);
    if (c === 0x3e) return { name, attrs, end: j + 1 };
    if (isSpace(c) || c === 0x2f) {
      j++;
      continue;
    }
    const a0 = j;
    while (j < n) {
      const d = s.charCodeAt(j);
      if (isSpace(d) || d === 0x3d || d === 0x3e || (d === 0x2f && j > a0)) break;
      j++;
    }
    const aname = s.slice(a0, j).toLowerCase();
    while (j < n && isSpace(s.charCodeAt(j))) j++;
    let value = '';
    if (s[j] === '=') {
      j++;
      while (j < n && isSpace(s.charCodeAt(j))) j++;
      const q = s[j];
      if (q === '"' || q === "'") {
        const close = s.indexOf(q, j + 1);
        if (close === -1) return { name, attrs, end: -1 };
        value = s.slice(j + 1, close);
        j = close + 1;
      } else {
        const v0 = j;
        while (j < n && !isSpace(s.charCodeAt(j)) && s.charCodeAt(j) !== 0x3e) j++;
        value = s.slice(v0, j);
      }
    }
    if (aname) attrs.push({ name: aname, value: value.slice(0, MAX_ATTR_CHARS) });
  }
  return { name, attrs, end: -1 };
}

function imageSource(src: string, opts: SanitizeOptions): string | undefined {
  const v = decodeEntities(src).trim();
  if (DATA_IMAGE.test(v)) return v;
  if (v.slice(0, 4).toLowerCase() === 'cid:') {
    return opts.inlineImages?.get(v.slice(4).replace(/^<|>$/g, ''));
  }
  return undefined;
}

function startTag(name: string, attrs: Attr[], opts: SanitizeOptions): string {
  let out = `<${name}`;
  const seen = new Set<string>();
  for (const a of attrs) {
    if (seen.has(a.name)) continue;
    seen.add(a.name);
    if (a.name === 'href' && (name === 'a' || name === 'area')) {
      out += ` data-trawl-href="${escapeAttr(decodeEntities(a.value).trim())}"`;
    } else if (a.name === 'src' && name === 'img') {
      const src = imageSource(a.value, opts);
      out +=
        src !== undefined
          ? ` src="${escapeAttr(src)}"`
          : ` data-trawl-src="${escapeAttr(decodeEntities(a.value).trim())}"`;
    } else if (a.name === 'style') {
      const st = sanitizeStyle(a.value);
      if (st) out += ` style="${escapeAttr(st)}"`;
    } else if (ATTRIBUTES.has(a.name)) {
      out += ` ${a.name}="${escapeAttr(decodeEntities(a.value))}"`;
    }
  }
  return `${out}>`;
}

/** The inert HTML of a message body (see the module comment). */
export function sanitizeHtml(html: string, opts: SanitizeOptions = {}): string {
  const s = html.length > (opts.maxChars ?? 5_000_000) ? html.slice(0, opts.maxChars) : html;
  // end tags of dropped elements are looked for in a lower-cased copy (one indexOf per element)
  let lower: string | undefined;
  const n = s.length;
  const out: string[] = [];
  let i = 0;
  let text = 0;
  const flush = (to: number) => {
    if (to > text) out.push(escapeText(s.slice(text, to)));
  };
  while (i < n) {
    const lt = s.indexOf('<', i);
    if (lt === -1) break;
    const c = s.charCodeAt(lt + 1);
    if (c === 0x21 || c === 0x3f) {
      // <!-- comment -->, <!DOCTYPE …>, <![CDATA[ … ]]>, <?…>: removed
      flush(lt);
      let end: number;
      if (s.startsWith('<!--', lt)) {
        const close = s.indexOf('-->', lt + 4);
        end = close === -1 ? n : close + 3;
      } else {
        const close = s.indexOf('>', lt + 2);
        end = close === -1 ? n : close + 1;
      }
      i = text = end;
      continue;
    }
    const closing = c === 0x2f;
    const nameAt = closing ? lt + 2 : lt + 1;
    if (!isNameStart(s.charCodeAt(nameAt))) {
      // a `<` that starts no tag is text
      i = lt + 1;
      continue;
    }
    flush(lt);
    const tag = readTag(s, nameAt);
    if (tag.end === -1) {
      // a tag that never ends: the rest is not shown
      i = text = n;
      break;
    }
    i = text = tag.end;
    if (closing) {
      if (ALLOWED.has(tag.name) && !VOID.has(tag.name)) out.push(`</${tag.name}>`);
      continue;
    }
    if (tag.name === 'plaintext') {
      // everything after <plaintext> is text
      out.push(escapeText(s.slice(i)));
      i = text = n;
      break;
    }
    if (DROP_WITH_CONTENT.has(tag.name)) {
      lower ??= s.toLowerCase();
      const close = lower.indexOf(`</${tag.name}`, i);
      if (close === -1) {
        i = text = n;
        break;
      }
      const gt = s.indexOf('>', close);
      i = text = gt === -1 ? n : gt + 1;
      continue;
    }
    if (ALLOWED.has(tag.name)) out.push(startTag(tag.name, tag.attrs, opts));
  }
  flush(n);
  return out.join('');
}
