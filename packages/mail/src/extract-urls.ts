import { domainToUnicode } from 'node:url';
import type { Email } from '@trawl/contracts';
import { parse as parseHost } from 'tldts';
import { decodeEntities } from './html-entities.ts';
import { TagCursor } from './html-tags.ts';
import { htmlToText } from './html-to-text.ts';

export type UrlSource = 'text' | 'href' | 'src' | 'form' | 'css' | 'meta' | 'area';

export interface ExtractedUrl {
  /** The URL, normalised by the WHATWG URL parser (data: URLs cut to 2048 characters). */
  url: string;
  /** Lower-case scheme without `:` (`https`, `mailto`, `data`, `javascript`, ...). */
  scheme: string;
  /** Lower-case host, IDN as punycode; '' when the URL has none (data:, javascript:). */
  host: string;
  /** The host in Unicode, when it differs (IDN). */
  unicodeHost?: string;
  /** eTLD+1 of the host (public suffix list); absent for IPs and bare suffixes. */
  registrableDomain?: string;
  publicSuffix?: string;
  isIp: boolean;
  port?: number;
  source: UrlSource;
  /** Text shown for a link (`<a>` content, image alt), at most 200 characters. */
  anchorText?: string;
  /** A domain shown in the anchor text when the text looks like a URL or domain. */
  anchorDomain?: string;
  /** The element (or one around it) is hidden: display:none, visibility:hidden, zero size, white on white. */
  hidden?: boolean;
  /** The URL is an image, or the link's content is an image. */
  isImage?: boolean;
  /** For forms: the form has a password input. */
  formHasPassword?: boolean;
  /** For forms: the method, lower-case. */
  formMethod?: string;
}

export interface ExtractUrlsOptions {
  /** Most URLs answered. Default 500. */
  maxUrls?: number;
}

const MAX_HTML = 2 * 1024 * 1024;
const MAX_TEXT = 1024 * 1024;
const MAX_URL = 2048;
const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'source',
  'track',
  'wbr',
]);
const SRC_TAGS = new Set([
  'img',
  'iframe',
  'frame',
  'script',
  'embed',
  'source',
  'video',
  'audio',
  'track',
  'input',
]);

/** JavaScript's white space (`\s`, what trim() removes), by char code. */
function isSpaceCode(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** `[^\s"'<>/=]`: a character of an attribute name. */
function isNameCode(c: number): boolean {
  return (
    c !== 0x22 &&
    c !== 0x27 &&
    c !== 0x3c &&
    c !== 0x3e &&
    c !== 0x2f &&
    c !== 0x3d &&
    !isSpaceCode(c)
  );
}

/** `[^\s"'=<>`]`: a character of an unquoted attribute value. */
function isBareValueCode(c: number): boolean {
  return (
    c !== 0x22 &&
    c !== 0x27 &&
    c !== 0x3d &&
    c !== 0x3c &&
    c !== 0x3e &&
    c !== 0x60 &&
    !isSpaceCode(c)
  );
}

/** The attributes the extraction reads (by slot); the others are skipped unread. */
const WANTED_ATTRS = new Map(
  [
    'style',
    'hidden',
    'width',
    'height',
    'type',
    'background',
    'href',
    'alt',
    'http-equiv',
    'content',
    'action',
    'method',
    'data',
    'src',
  ].map((name, slot) => [name, slot]),
);
const MIN_WANTED = 3;
const MAX_WANTED = 10;

/** `s.slice(from, to).toLowerCase()`, without the second copy when nothing needs lower-casing. */
function lowerSlice(s: string, from: number, to: number): string {
  for (let k = from; k < to; k++) {
    const c = s.charCodeAt(k);
    if ((c >= 0x41 && c <= 0x5a) || c >= 0x80) return s.slice(from, to).toLowerCase();
  }
  return s.slice(from, to);
}

/**
 * The attributes of one tag (reused from tag to tag). Reads the attribute text as the regular
 * expression `([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?` would, in one pass:
 * a name, then a value when `=` and a well-formed value follow (an unclosed quote gives an empty
 * value, and the text after it is read as more names). Names are lower-cased, the first of a name
 * wins, values are entity-decoded when read.
 */
class Attrs {
  /** Raw value by slot of WANTED_ATTRS; undefined when absent. */
  private readonly raw: (string | undefined)[] = new Array(WANTED_ATTRS.size).fill(undefined);

  parse(s: string): this {
    const raw = this.raw;
    raw.fill(undefined);
    const n = s.length;
    let p = 0;
    while (p < n) {
      if (!isNameCode(s.charCodeAt(p))) {
        p++;
        continue;
      }
      const nameStart = p;
      do p++;
      while (p < n && isNameCode(s.charCodeAt(p)));
      const nameEnd = p;
      let value = '';
      let q = p;
      while (q < n && isSpaceCode(s.charCodeAt(q))) q++;
      if (q < n && s.charCodeAt(q) === 0x3d /* = */) {
        q++;
        while (q < n && isSpaceCode(s.charCodeAt(q))) q++;
        if (q < n) {
          const c = s.charCodeAt(q);
          if (c === 0x22 || c === 0x27) {
            const close = s.indexOf(c === 0x22 ? '"' : "'", q + 1);
            if (close >= 0) {
              value = s.slice(q + 1, close);
              p = close + 1;
            }
          } else if (isBareValueCode(c)) {
            let r = q + 1;
            while (r < n && isBareValueCode(s.charCodeAt(r))) r++;
            value = s.slice(q, r);
            p = r;
          }
        }
      }
      // lower-casing never changes the length of a name that becomes a wanted (ASCII) one
      const len = nameEnd - nameStart;
      if (len >= MIN_WANTED && len <= MAX_WANTED) {
        const slot = WANTED_ATTRS.get(lowerSlice(s, nameStart, nameEnd));
        if (slot !== undefined && raw[slot] === undefined) raw[slot] = value;
      }
    }
    return this;
  }

  has(name: string): boolean {
    return this.raw[WANTED_ATTRS.get(name) as number] !== undefined;
  }

  get(name: string): string | undefined {
    const v = this.raw[WANTED_ATTRS.get(name) as number];
    return v === undefined ? undefined : decodeEntities(v);
  }
}

const HIDING_COLOR = /(?:^|;)color:(?:#fff(?:fff)?|white|rgb\(255,255,255\))/;
const HIDING_BACKGROUND = /background(?:-color)?:(?:#fff(?:fff)?|white|rgb\(255,255,255\))/;

/** Styles whose answer one extraction remembers. */
const MAX_KNOWN_STYLES = 4096;

function isHiddenStyle(style: string): boolean {
  const s = style.toLowerCase().replace(/\s+/g, '');
  // each rule is looked for only when the text it needs is there
  if (s.includes('display:none') || s.includes('visibility:hidden')) return true;
  if (s.includes(':0')) {
    if (s.includes('opacity:0') && /opacity:0(?:[;!]|$)/.test(s)) return true;
    if (s.includes('font-size:0') && /font-size:0(?:px|pt|em)?(?:[;!]|$)/.test(s)) return true;
    if (
      s.includes('overflow:hidden') &&
      /(?:^|;)(?:max-)?(?:height|width):0(?:px)?(?:[;!]|$)/.test(s)
    )
      return true;
  }
  return s.includes('background') && HIDING_BACKGROUND.test(s) && HIDING_COLOR.test(s);
}

const HOSTLIKE =
  /(?:[a-z][a-z0-9+.-]*:\/\/)?((?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,62})\.)+[\p{L}]{2,63})(?=$|[\s/:?#)\]>,;!"'])/iu;

/** A domain shown in link text (`www.paypal.com`, `https://bank.example/login`), lower-case punycode. */
export function domainInText(text: string): string | undefined {
  const head = text.slice(0, 300);
  if (!head.includes('.')) return undefined;
  const m = HOSTLIKE.exec(head);
  if (m === null) return undefined;
  const info = parseHost((m[1] as string).toLowerCase());
  if (!info.isIcann || info.hostname === null) return undefined;
  try {
    return new URL(`http://${info.hostname}`).hostname;
  } catch {
    return undefined;
  }
}

type UrlExtra = { [K in keyof ExtractedUrl]?: ExtractedUrl[K] | undefined };

/**
 * Finds closing tags (`</a`, `</form`, ...) after a position; amortised linear over a document
 * because each name's next occurrence is remembered and searched again only once passed.
 */
class CloseFinder {
  private readonly next = new Map<string, number>();
  constructor(private readonly html: string) {}
  find(name: string, from: number): number {
    const known = this.next.get(name);
    if (known !== undefined && (known === -1 || known >= from)) return known;
    const re = new RegExp(`</${name}\\b`, 'gi');
    re.lastIndex = from;
    const m = re.exec(this.html);
    const at = m === null ? -1 : m.index;
    this.next.set(name, at);
    return at;
  }
}

class Collector {
  readonly out: ExtractedUrl[] = [];
  private readonly seen = new Set<string>();
  /** tldts answers by host: a message links to few hosts, many times. */
  private readonly hosts = new Map<string, ReturnType<typeof parseHost>>();
  constructor(
    private readonly max: number,
    private base: URL | undefined,
  ) {}

  full(): boolean {
    return this.out.length >= this.max;
  }

  setBase(href: string): void {
    try {
      this.base = new URL(href);
    } catch {
      // ignore a broken base
    }
  }

  add(raw: string, source: UrlSource, extra: UrlExtra = {}): void {
    if (this.full()) return;
    let s = raw.trim().replace(/[\r\n\t]/g, '');
    if (s === '' || s.startsWith('#')) return;
    if (/^cid:/i.test(s)) return;
    if (/^www\./i.test(s)) s = `http://${s}`;
    if (/^hxxps?:/i.test(s)) s = s.replace(/^hxxp/i, 'http');
    if (s.length > 8192) s = s.slice(0, 8192);
    let u: URL;
    try {
      u = this.base !== undefined ? new URL(s, this.base) : new URL(s);
    } catch {
      return;
    }
    // the WHATWG parser answers the scheme lower-case, followed by `:`
    const scheme = u.protocol.slice(0, -1);
    let url = u.href;
    if (url.length > MAX_URL && scheme === 'data') url = url.slice(0, MAX_URL);
    let host = u.hostname.toLowerCase();
    if (scheme === 'mailto')
      host = (u.pathname.split('@')[1] ?? '').toLowerCase().replace(/[?].*$/, '');
    if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
    const key = `${source}|${url}|${extra.anchorDomain ?? ''}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    let info: ReturnType<typeof parseHost> | undefined;
    if (host !== '') {
      info = this.hosts.get(host);
      if (info === undefined) {
        info = parseHost(host);
        this.hosts.set(host, info);
      }
    }
    const entry: ExtractedUrl = { url, scheme, host, isIp: info?.isIp === true, source };
    if (host.includes('xn--')) {
      const unicode = domainToUnicode(host);
      if (unicode !== '' && unicode !== host) entry.unicodeHost = unicode;
    }
    if (info?.domain && !info.isIp) entry.registrableDomain = info.domain;
    if (info?.publicSuffix && !info.isIp) entry.publicSuffix = info.publicSuffix;
    if (u.port !== '') entry.port = Number(u.port);
    const e = entry as unknown as Record<string, unknown>;
    for (const k in extra) {
      const v = extra[k as keyof UrlExtra];
      if (v !== undefined && v !== false && v !== '') e[k] = v;
    }
    this.out.push(entry);
  }
}

function cssUrls(css: string, c: Collector, hidden: boolean): void {
  for (const m of css
    .slice(0, 256 * 1024)
    .matchAll(/url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)/gi)) {
    const v = decodeEntities(m[1] ?? m[2] ?? m[3] ?? '');
    c.add(v, 'css', { hidden, isImage: true });
    if (c.full()) return;
  }
  for (const m of css.slice(0, 256 * 1024).matchAll(/@import\s+["']([^"']+)["']/gi))
    c.add(m[1] as string, 'css', { hidden });
}

const BACKGROUND_URL = /background(?:-image)?\s*:\s*url\(/i;
const ZERO_WIDTH = /[\u200b-\u200d\u2060\ufeff\u00ad]/g;
/** Runs of white space that are not a single space already. */
const SPACES = /\s{2,}|[^\S ]/g;

function anchorOf(inner: string): { text: string; isImage: boolean } {
  let text: string;
  let isImage: boolean;
  if (!inner.includes('<') && !inner.includes('&')) {
    // plain text: what htmlToText would leave of it, white space collapsed
    text = inner.replace(ZERO_WIDTH, '').replace(SPACES, ' ').trim();
    isImage = BACKGROUND_URL.test(inner);
  } else {
    text = htmlToText(inner).replace(SPACES, ' ').trim();
    isImage = /<img\b/i.test(inner) || BACKGROUND_URL.test(inner);
  }
  if (text === '') {
    const imgAlt = /<img\b[^>]*?\balt\s*=\s*(?:"([^"]*)"|'([^']*)')/i.exec(inner);
    if (imgAlt !== null) text = decodeEntities(imgAlt[1] ?? imgAlt[2] ?? '').trim();
  }
  return { text: text.length > 200 ? text.slice(0, 200) : text, isImage };
}

/** The attribute text ends with `/` (a self-closed element), trailing white space aside. */
function selfClosed(html: string, attrsStart: number, attrsEnd: number): boolean {
  let i = attrsEnd - 1;
  while (i >= attrsStart && isSpaceCode(html.charCodeAt(i))) i--;
  return i >= attrsStart && html.charCodeAt(i) === 0x2f;
}

/** URLs of an HTML document (see extractUrls). */
function extractHtmlUrls(htmlIn: string, c: Collector): void {
  const html = htmlIn.length > MAX_HTML ? htmlIn.slice(0, MAX_HTML) : htmlIn;
  const stack: { name: string; hidden: boolean }[] = [];
  const closer = new CloseFinder(html);
  // work spent on element contents (anchor texts, forms, style sheets), bounded so that many
  // unclosed elements stay linear
  let anchorBudget = 4 * html.length + 1_000_000;
  let hiddenDepth = 0;
  let cssBudget = 1024 * 1024;
  let skipUntil = -1;
  const hidingStyles = new Map<string, boolean>();
  const tag = new TagCursor(html);
  const attrs = new Attrs();
  while (tag.next()) {
    if (c.full()) return;
    if (tag.start < skipUntil) continue;
    const name = tag.name;
    const after = tag.end;
    if (tag.closing) {
      let i = stack.length - 1;
      while (i >= 0 && stack[i]!.name !== name) i--;
      if (i >= 0) {
        for (let j = i; j < stack.length; j++) if (stack[j]!.hidden) hiddenDepth--;
        stack.length = i;
      }
      continue;
    }
    attrs.parse(tag.attrs());
    const selfClosing = selfClosed(html, tag.attrsStart, tag.attrsEnd);
    const style = attrs.get('style');
    let styleHides = false;
    if (style) {
      // messages repeat the same few styles on many elements
      const known = hidingStyles.get(style);
      if (known !== undefined) styleHides = known;
      else {
        styleHides = isHiddenStyle(style);
        if (hidingStyles.size < MAX_KNOWN_STYLES) hidingStyles.set(style, styleHides);
      }
    }
    const selfHidden =
      styleHides ||
      attrs.has('hidden') ||
      attrs.get('width') === '0' ||
      attrs.get('height') === '0' ||
      (name === 'input' && attrs.get('type')?.toLowerCase() === 'hidden');
    const hidden = hiddenDepth > 0 || selfHidden;
    if (!VOID.has(name) && !selfClosing) {
      stack.push({ name, hidden: selfHidden });
      if (selfHidden) hiddenDepth++;
      if (stack.length > 2000) {
        stack.length = 0;
        hiddenDepth = 0;
      }
    }
    if (style?.includes('url(')) cssUrls(style, c, hidden);
    if ((name === 'script' || name === 'textarea' || name === 'xmp') && !selfClosing) {
      const end = closer.find(name, after);
      skipUntil = end < 0 ? html.length : end;
    }
    const background = attrs.get('background');
    if (background) c.add(background, 'src', { hidden, isImage: true });
    switch (name) {
      case 'a': {
        const href = attrs.get('href');
        if (href === undefined) break;
        const close = closer.find('a', after);
        const inner =
          anchorBudget > 0
            ? html.slice(after, close < 0 ? after + 2000 : Math.min(close, after + 4000))
            : '';
        anchorBudget -= inner.length;
        const { text, isImage } = anchorOf(inner);
        const innerHidden = text === '' && !isImage;
        c.add(href, 'href', {
          anchorText: text !== '' ? text : undefined,
          anchorDomain: text !== '' ? domainInText(text) : undefined,
          hidden: hidden || innerHidden,
          isImage,
        });
        break;
      }
      case 'area': {
        const href = attrs.get('href');
        if (href !== undefined)
          c.add(href, 'area', { hidden, anchorText: attrs.get('alt')?.slice(0, 200) });
        break;
      }
      case 'base': {
        const href = attrs.get('href');
        if (href !== undefined) {
          c.add(href, 'href', { hidden: true });
          c.setBase(href);
        }
        break;
      }
      case 'link': {
        const href = attrs.get('href');
        if (href !== undefined) c.add(href, 'href', { hidden: true });
        break;
      }
      case 'meta': {
        if (attrs.get('http-equiv')?.toLowerCase() === 'refresh') {
          const mm = /url\s*=\s*['"]?([^'"\s;]+)/i.exec(attrs.get('content') ?? '');
          if (mm) c.add(mm[1] as string, 'meta', { hidden: true });
        }
        break;
      }
      case 'form': {
        const action = attrs.get('action') ?? '';
        const end = closer.find('form', after);
        const body =
          anchorBudget > 0
            ? html.slice(after, end < 0 ? after + 100_000 : Math.min(end, after + 100_000))
            : '';
        anchorBudget -= body.length;
        const password = /<input\b[^>]{0,2000}?\btype\s*=\s*["']?password/i.test(body);
        c.add(action === '' ? 'about:blank' : action, 'form', {
          hidden,
          formHasPassword: password,
          formMethod: (attrs.get('method') ?? 'get').toLowerCase().slice(0, 10),
        });
        break;
      }
      case 'style': {
        // a style sheet is text, not markup: read it once, then carry on after it
        const end = closer.find('style', after);
        const stop = Math.min(end < 0 ? html.length : end, after + 64 * 1024);
        const css = cssBudget > 0 ? html.slice(after, stop) : '';
        cssBudget -= css.length;
        cssUrls(css, c, hidden);
        if (end < 0) return;
        skipUntil = end;
        break;
      }
      case 'object': {
        const data = attrs.get('data');
        if (data) c.add(data, 'src', { hidden });
        break;
      }
      default: {
        if (SRC_TAGS.has(name)) {
          const src = attrs.get('src');
          if (src !== undefined) {
            const w = attrs.get('width');
            const h = attrs.get('height');
            const tiny = (w === '1' || w === '0') && (h === '1' || h === '0');
            c.add(src, 'src', {
              hidden: hidden || tiny,
              isImage:
                name === 'img' ||
                (name === 'input' && attrs.get('type')?.toLowerCase() === 'image'),
              anchorText: name === 'img' ? attrs.get('alt')?.slice(0, 200) : undefined,
            });
          }
        }
      }
    }
  }
}

const TEXT_URL_RE = /\b(?:(?:https?|hxxps?|ftp):\/\/|www\.)[^\s<>"'`{}|\\^[\]]+/gi;

/** URLs written in plain text (scheme URLs and bare `www.` hosts). */
function extractTextUrls(text: string, c: Collector): void {
  const t = text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
  for (const m of t.matchAll(TEXT_URL_RE)) {
    if (c.full()) return;
    let u = m[0].replace(/[.,;:!?)\]>'"*]+$/, '');
    // "(see http://x/y)" keeps its brackets balanced
    if (u.includes('(') && !u.includes(')') && m[0].includes(')')) u += ')';
    c.add(u, 'text');
  }
}

/**
 * Every URL of an Email's bodies, never fetched: `href`, `src` (img, iframe, script, ...), form actions
 * (with method and whether the form asks for a password), area, base, meta refresh, CSS `url()`, and
 * URLs written in the text, including bare `www.` hosts. Links carry the text shown beside them and a
 * domain found in that text; hidden and image links are marked. Deduplicated, at most `maxUrls`.
 */
export function extractUrls(
  email: Pick<Email, 'body_text' | 'body_html'>,
  opts: ExtractUrlsOptions = {},
): ExtractedUrl[] {
  const c = new Collector(opts.maxUrls ?? 500, undefined);
  if (email.body_html) extractHtmlUrls(email.body_html, c);
  const cText = new Collector(opts.maxUrls ?? 500, undefined);
  if (email.body_text) extractTextUrls(email.body_text, cText);
  // a text URL that the HTML already has adds nothing
  const known = new Set(c.out.map((u) => u.url));
  for (const u of cText.out) {
    if (c.full()) break;
    if (!known.has(u.url)) c.out.push(u);
  }
  return c.out;
}
