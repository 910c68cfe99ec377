import { domainToUnicode } from 'node:url';
import type { Email } from '@trawl/contracts';
import { parse as parseHost } from 'tldts';
import { isSpaceCode } from './char-codes.ts';
import { cssUrlValues } from './css-url-values.ts';
import { decodeEntities } from './html-entities.ts';
import { TagCursor } from './html-tags.ts';
import { htmlToText } from './html-to-text.ts';
import { countTagAttribute } from './tag-attribute-scan.ts';
import { trimEndOf } from './trim-end.ts';

/** Where a link was found inside an attachment (document-links.ts). */
export const DOCUMENT_LINK_SOURCES = ['pdf', 'office', 'calendar', 'qr'] as const;
/** The kind of attachment a link was read from. */
export type DocumentLinkSource = (typeof DOCUMENT_LINK_SOURCES)[number];

/** Where in the message a link was found. */
export type UrlSource =
  | 'text'
  | 'href'
  | 'src'
  | 'form'
  | 'css'
  | 'meta'
  | 'area'
  /** `<link href>`: a style sheet, icon or feed the client loads or ignores, never clicked. */
  | 'link'
  | DocumentLinkSource;

/** One link found in a message: the URL, its text and where it was. */
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
  /**
   * The host as written is not the host the browser goes to, by a trick: %-escapes in it, or an
   * IPv4 address written as one number, in hex or in octal.
   */
  hostObfuscated?: boolean;
  /** For a link found in an attachment (source pdf, office, calendar, qr): its index and name. */
  attachment?: number;
  attachmentName?: string;
}

/** What extractUrls reads (text, HTML, attachments) and its bounds. */
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

/** Classes of the ASCII characters, for the attribute reader. */
const NAME_CODE = 1;
const BARE_VALUE_CODE = 2;
const SPACE_CODE = 4;
const ASCII_CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const space = isSpaceCode(c);
  const ch = String.fromCharCode(c);
  ASCII_CLASS[c] =
    (!space && !`"'<>/=`.includes(ch) ? NAME_CODE : 0) |
    (!space && !`"'=<>\``.includes(ch) ? BARE_VALUE_CODE : 0) |
    (space ? SPACE_CODE : 0);
}

/** `[^\s"'<>/=]`: a character of an attribute name. */
function isNameCode(c: number): boolean {
  return c < 128 ? ((ASCII_CLASS[c] as number) & NAME_CODE) !== 0 : !isSpaceCode(c);
}

/** `[^\s"'=<>`]`: a character of an unquoted attribute value. */
function isBareValueCode(c: number): boolean {
  return c < 128 ? ((ASCII_CLASS[c] as number) & BARE_VALUE_CODE) !== 0 : !isSpaceCode(c);
}

/** `\s`, by the table for ASCII. */
function isSpace(c: number): boolean {
  return c < 128 ? ((ASCII_CLASS[c] as number) & SPACE_CODE) !== 0 : isSpaceCode(c);
}

/** The attributes the extraction reads, by slot; the others are skipped unread. */
const STYLE = 0;
const HIDDEN = 1;
const WIDTH = 2;
const HEIGHT = 3;
const TYPE = 4;
const BACKGROUND = 5;
const HREF = 6;
const ALT = 7;
const HTTP_EQUIV = 8;
const CONTENT = 9;
const ACTION = 10;
const METHOD = 11;
const DATA = 12;
const SRC = 13;
const WANTED_ATTRS = new Map([
  ['style', STYLE],
  ['hidden', HIDDEN],
  ['width', WIDTH],
  ['height', HEIGHT],
  ['type', TYPE],
  ['background', BACKGROUND],
  ['href', HREF],
  ['alt', ALT],
  ['http-equiv', HTTP_EQUIV],
  ['content', CONTENT],
  ['action', ACTION],
  ['method', METHOD],
  ['data', DATA],
  ['src', SRC],
]);
const MAX_WANTED = 10;
/**
 * By name length, a bit per first letter of the wanted attributes: most other names (class,
 * align, border, bgcolor, ...) are skipped without a copy or a look-up. A name that lower-cases
 * to a wanted one has its length and an ASCII first letter (only the Kelvin sign lower-cases to
 * an ASCII letter, `k`, which starts no wanted name).
 */
const WANTED_SHAPES = new Array<number>(MAX_WANTED + 1).fill(0);
for (const name of WANTED_ATTRS.keys()) {
  WANTED_SHAPES[name.length] =
    (WANTED_SHAPES[name.length] as number) | (1 << (name.charCodeAt(0) - 0x61));
}

/** The name at `from` may lower-case to a wanted attribute name. */
function wantedShape(s: string, from: number, to: number): boolean {
  const len = to - from;
  if (len > MAX_WANTED) return false;
  const c = s.charCodeAt(from) | 0x20;
  return c >= 0x61 && c <= 0x7a && ((WANTED_SHAPES[len] as number) & (1 << (c - 0x61))) !== 0;
}

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

  /** Reads the attribute text `s.slice(from, to)` (values are sliced from `s`). */
  parse(s: string, from: number, to: number): this {
    const raw = this.raw;
    for (let k = 0; k < raw.length; k++) raw[k] = undefined;
    const n = to;
    let p = from;
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
      while (q < n && isSpace(s.charCodeAt(q))) q++;
      if (q < n && s.charCodeAt(q) === 0x3d /* = */) {
        q++;
        while (q < n && isSpace(s.charCodeAt(q))) q++;
        if (q < n) {
          const c = s.charCodeAt(q);
          if (c === 0x22 || c === 0x27) {
            // a quote not closed before `to` leaves the value empty (linear over a document: no
            // quote of this kind is left in the tag, the search ends at the next one after it)
            const close = s.indexOf(c === 0x22 ? '"' : "'", q + 1);
            if (close >= 0 && close < n) {
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
      if (wantedShape(s, nameStart, nameEnd)) {
        const slot = WANTED_ATTRS.get(lowerSlice(s, nameStart, nameEnd));
        if (slot !== undefined && raw[slot] === undefined) raw[slot] = value;
      }
    }
    return this;
  }

  /** The attribute in this slot is there (with or without a value). */
  has(slot: number): boolean {
    return this.raw[slot] !== undefined;
  }

  /** The decoded value of the attribute in this slot. */
  get(slot: number): string | undefined {
    const v = this.raw[slot];
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

/** `</name\b` by element name (a few fixed names), compiled once. */
const CLOSE_TAGS = new Map<string, RegExp>();

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
    let re = CLOSE_TAGS.get(name);
    if (re === undefined) {
      re = new RegExp(`</${name}\\b`, 'gi');
      CLOSE_TAGS.set(name, re);
    }
    re.lastIndex = from;
    const m = re.exec(this.html);
    const at = m === null ? -1 : m.index;
    this.next.set(name, at);
    return at;
  }
}

/** What a collector keeps of a parsed URL. */
interface ParsedUrl {
  url: string;
  scheme: string;
  host: string;
  port: string;
  obfuscated: boolean;
}

const isDigitCode = (c: number) => c >= 48 && c <= 57;

/**
 * Whether the host written in an absolute http(s) URL `s` is a disguise of `host` (the parsed one):
 * it holds a %-escape, or `host` is an IPv4 address the text does not write in dotted decimal
 * ("3512041827", "0xd1.0x55.42.99", "0321.0125.…"). One pass over the authority.
 */
function hostDisguised(s: string, host: string): boolean {
  const sep = s.indexOf('://');
  if (sep === -1) return false;
  let end = sep + 3;
  let at = -1;
  for (; end < s.length; end++) {
    const c = s.charCodeAt(end);
    if (c === 47 || c === 63 || c === 35 || c === 92) break; // / ? # \
    if (c === 64) at = end; // @
  }
  let written = s.slice(at === -1 ? sep + 3 : at + 1, end);
  if (written.includes('%')) return true;
  const colon = written.lastIndexOf(':');
  if (colon !== -1 && !written.includes(']')) written = written.slice(0, colon);
  // an IPv4 host: the text must write it as the parser answers it
  let dots = 0;
  for (let i = 0; i < host.length; i++) {
    const c = host.charCodeAt(i);
    if (c === 46) dots++;
    else if (!isDigitCode(c)) return false;
  }
  return dots === 3 && written.toLowerCase().replace(/\.$/, '') !== host;
}

/** Parses one URL (against a base) into what a collector keeps; null when it does not parse. */
function parseUrl(s: string, base: URL | undefined): ParsedUrl | null {
  let u: URL;
  try {
    u = base !== undefined ? new URL(s, base) : new URL(s);
  } catch {
    return parseControlHost(s);
  }
  // the WHATWG parser answers the scheme lower-case, followed by `:`
  const scheme = u.protocol.slice(0, -1);
  let url = u.href;
  if (url.length > MAX_URL && scheme === 'data') url = url.slice(0, MAX_URL);
  let host = u.hostname.toLowerCase();
  if (scheme === 'mailto')
    host = (u.pathname.split('@')[1] ?? '').toLowerCase().replace(/[?].*$/, '');
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  const obfuscated = (scheme === 'http' || scheme === 'https') && hostDisguised(s, host);
  return { url, scheme, host, port: u.port, obfuscated };
}

/** A C0 or C1 control character (U+0000-U+001F, U+007F-U+009F): never part of a host name. */
const isControlCode = (c: number) => c < 32 || (c >= 127 && c <= 159);

/**
 * An absolute http(s) link that does not parse because its written host holds control characters
 * ("http://ð\u009f51\u009cpza9.example.com/…", entities such as `&#159;` decoded): a host written
 * so that a filter cannot read it. No host name holds one, so it is no slip of a sender's; the link
 * is kept with them removed (where it leads) and marked as disguised. Null for anything else that
 * does not parse. One pass over the authority.
 */
function parseControlHost(s: string): ParsedUrl | null {
  const start = s.search(/\S/);
  if (start === -1 || !/^https?:\/\//i.test(s.slice(start, start + 8))) return null;
  const from = s.indexOf('//', start) + 2;
  let end = from;
  let controls = false;
  for (; end < s.length; end++) {
    const c = s.charCodeAt(end);
    if (c === 47 || c === 63 || c === 35 || c === 92) break; // / ? # \
    if (isControlCode(c)) controls = true;
  }
  if (!controls) return null;
  let authority = '';
  for (let i = from; i < end; i++) if (!isControlCode(s.charCodeAt(i))) authority += s[i];
  let u: URL;
  try {
    u = new URL(`${s.slice(start, from)}${authority}${s.slice(end)}`);
  } catch {
    return null;
  }
  const scheme = u.protocol.slice(0, -1);
  return { url: u.href, scheme, host: u.hostname.toLowerCase(), port: u.port, obfuscated: true };
}

/** URLs parsed per collector, and the longest one remembered. */
const MAX_PARSED = 1024;
const MAX_PARSED_CHARS = 2048;

class Collector {
  readonly out: ExtractedUrl[] = [];
  private readonly seen = new Set<string>();
  /** tldts answers by host: a message links to few hosts, many times. */
  private readonly hosts = new Map<string, ReturnType<typeof parseHost>>();
  /** Parsed URLs by their text (against the current base): messages repeat their links. */
  private readonly parsed = new Map<string, ParsedUrl | null>();
  constructor(
    private readonly max: number,
    private base: URL | undefined,
  ) {}

  full(): boolean {
    return this.out.length >= this.max;
  }

  setBase(href: string): void {
    this.parsed.clear();
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
    let p = this.parsed.get(s);
    if (p === undefined) {
      p = parseUrl(s, this.base);
      if (s.length <= MAX_PARSED_CHARS && this.parsed.size < MAX_PARSED) this.parsed.set(s, p);
    }
    if (p === null) return;
    const { url, scheme, host } = p;
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
    if (p.port !== '') entry.port = Number(p.port);
    if (p.obfuscated) entry.hostObfuscated = true;
    const e = entry as unknown as Record<string, unknown>;
    for (const k in extra) {
      const v = extra[k as keyof UrlExtra];
      if (v !== undefined && v !== false && v !== '') e[k] = v;
    }
    this.out.push(entry);
  }
}

function cssUrls(css: string, c: Collector, hidden: boolean): void {
  for (const raw of cssUrlValues(css.slice(0, 256 * 1024))) {
    c.add(decodeEntities(raw), 'css', { hidden, isImage: true });
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

/** One walk over an HTML document: what the element handlers share. */
class HtmlWalk {
  readonly closer: CloseFinder;
  readonly attrs = new Attrs();
  /**
   * Work spent on element contents (anchor texts, forms), bounded so that many unclosed elements
   * stay linear.
   */
  anchorBudget: number;
  cssBudget = 1024 * 1024;
  /** Tags before this index are inside an element whose content is not markup. */
  skipUntil = -1;
  /** The rest of the document is not markup (a style sheet without an end). */
  done = false;

  constructor(
    readonly html: string,
    readonly c: Collector,
  ) {
    this.closer = new CloseFinder(html);
    this.anchorBudget = 4 * html.length + 1_000_000;
  }

  /**
   * The content of the `tag` element whose start tag ends at `after`: up to its end tag, at most
   * `max` characters (`unclosed` when it has no end tag); charged to the anchor budget, '' once
   * that is spent.
   */
  contentOf(tag: string, after: number, max: number, unclosed: number): string {
    const close = this.closer.find(tag, after);
    const text =
      this.anchorBudget > 0
        ? this.html.slice(after, close < 0 ? after + unclosed : Math.min(close, after + max))
        : '';
    this.anchorBudget -= text.length;
    return text;
  }
}

/** Reads the URLs of one element; `after` is the index after its start tag. */
type ElementHandler = (w: HtmlWalk, name: string, after: number, hidden: boolean) => void;

function anchorElement(w: HtmlWalk, _name: string, after: number, hidden: boolean): void {
  const href = w.attrs.get(HREF);
  if (href === undefined) return;
  const inner = w.contentOf('a', after, 4000, 2000);
  const { text, isImage } = anchorOf(inner);
  const innerHidden = text === '' && !isImage;
  w.c.add(href, 'href', {
    anchorText: text !== '' ? text : undefined,
    anchorDomain: text !== '' ? domainInText(text) : undefined,
    hidden: hidden || innerHidden,
    isImage,
  });
}

function areaElement(w: HtmlWalk, _name: string, _after: number, hidden: boolean): void {
  const href = w.attrs.get(HREF);
  if (href !== undefined)
    w.c.add(href, 'area', { hidden, anchorText: w.attrs.get(ALT)?.slice(0, 200) });
}

function baseElement(w: HtmlWalk): void {
  const href = w.attrs.get(HREF);
  if (href !== undefined) {
    w.c.add(href, 'href', { hidden: true });
    w.c.setBase(href);
  }
}

function linkElement(w: HtmlWalk): void {
  const href = w.attrs.get(HREF);
  if (href !== undefined) w.c.add(href, 'link', { hidden: true });
}

function metaElement(w: HtmlWalk): void {
  if (w.attrs.get(HTTP_EQUIV)?.toLowerCase() === 'refresh') {
    const mm = /url\s*=\s*['"]?([^'"\s;]+)/i.exec(w.attrs.get(CONTENT) ?? '');
    if (mm) w.c.add(mm[1] as string, 'meta', { hidden: true });
  }
}

const INPUT_TAG = /<input\b/gi;
const PASSWORD_TYPE = /\btype\s*=\s*["']?password/gi;

function formElement(w: HtmlWalk, _name: string, after: number, hidden: boolean): void {
  const action = w.attrs.get(ACTION) ?? '';
  const body = w.contentOf('form', after, 100_000, 100_000);
  const password = countTagAttribute(body, INPUT_TAG, PASSWORD_TYPE, 2000, true) > 0;
  w.c.add(action === '' ? 'about:blank' : action, 'form', {
    hidden,
    formHasPassword: password,
    formMethod: (w.attrs.get(METHOD) ?? 'get').toLowerCase().slice(0, 10),
  });
}

function styleElement(w: HtmlWalk, _name: string, after: number, hidden: boolean): void {
  // a style sheet is text, not markup: read it once, then carry on after it
  const end = w.closer.find('style', after);
  const stop = Math.min(end < 0 ? w.html.length : end, after + 64 * 1024);
  const css = w.cssBudget > 0 ? w.html.slice(after, stop) : '';
  w.cssBudget -= css.length;
  cssUrls(css, w.c, hidden);
  if (end < 0) w.done = true;
  else w.skipUntil = end;
}

function objectElement(w: HtmlWalk, _name: string, _after: number, hidden: boolean): void {
  const data = w.attrs.get(DATA);
  if (data) w.c.add(data, 'src', { hidden });
}

function srcElement(w: HtmlWalk, name: string, _after: number, hidden: boolean): void {
  const attrs = w.attrs;
  const src = attrs.get(SRC);
  if (src === undefined) return;
  const width = attrs.get(WIDTH);
  const height = attrs.get(HEIGHT);
  const tiny = (width === '1' || width === '0') && (height === '1' || height === '0');
  w.c.add(src, 'src', {
    hidden: hidden || tiny,
    isImage: name === 'img' || (name === 'input' && attrs.get(TYPE)?.toLowerCase() === 'image'),
    anchorText: name === 'img' ? attrs.get(ALT)?.slice(0, 200) : undefined,
  });
}

/** The elements that carry URLs, by name. */
const ELEMENT_HANDLERS = new Map<string, ElementHandler>([
  ['a', anchorElement],
  ['area', areaElement],
  ['base', baseElement],
  ['link', linkElement],
  ['meta', metaElement],
  ['form', formElement],
  ['style', styleElement],
  ['object', objectElement],
  ...[...SRC_TAGS].map((name): [string, ElementHandler] => [name, srcElement]),
]);

/**
 * Elements whose content a browser reads as text, not markup (HTML's raw text and RCDATA elements,
 * `noscript` aside: mail clients run no scripts, so its content is markup). What looks like a tag in
 * them is none: a `<style>` written inside `<noframes>` opens no style sheet in a browser, and must
 * not hide the links after it from this walk either.
 */
const RAW_TEXT = new Set(['script', 'textarea', 'xmp', 'noframes', 'noembed', 'iframe', 'title']);

/**
 * URLs of an HTML document (see extractUrls). The walk itself stays small (tags, attributes, what
 * hides an element); the elements that carry URLs are read by their handlers.
 */
function extractHtmlUrls(htmlIn: string, c: Collector): void {
  const html = htmlIn.length > MAX_HTML ? htmlIn.slice(0, MAX_HTML) : htmlIn;
  const w = new HtmlWalk(html, c);
  const attrs = w.attrs;
  // open elements: their names, whether each hides itself, how many are open
  const openNames: string[] = [];
  const openHides: boolean[] = [];
  let open = 0;
  let hiddenDepth = 0;
  const hidingStyles = new Map<string, boolean>();
  const tag = new TagCursor(html);
  while (tag.next()) {
    if (c.full()) return;
    if (tag.start < w.skipUntil) continue;
    const name = tag.name;
    if (tag.closing) {
      let i = open - 1;
      while (i >= 0 && openNames[i] !== name) i--;
      if (i >= 0) {
        for (let j = i; j < open; j++) if (openHides[j]) hiddenDepth--;
        open = i;
      }
      continue;
    }
    attrs.parse(html, tag.attrsStart, tag.attrsEnd);
    const selfClosing = selfClosed(html, tag.attrsStart, tag.attrsEnd);
    const style = attrs.get(STYLE);
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
      attrs.has(HIDDEN) ||
      attrs.get(WIDTH) === '0' ||
      attrs.get(HEIGHT) === '0' ||
      (name === 'input' && attrs.get(TYPE)?.toLowerCase() === 'hidden');
    const hidden = hiddenDepth > 0 || selfHidden;
    if (!VOID.has(name) && !selfClosing) {
      openNames[open] = name;
      openHides[open] = selfHidden;
      open++;
      if (selfHidden) hiddenDepth++;
      if (open > 2000) {
        open = 0;
        hiddenDepth = 0;
      }
    }
    if (style?.includes('url(')) cssUrls(style, c, hidden);
    if (RAW_TEXT.has(name) && !selfClosing) {
      const end = w.closer.find(name, tag.end);
      w.skipUntil = end < 0 ? html.length : end;
    }
    const background = attrs.get(BACKGROUND);
    if (background) c.add(background, 'src', { hidden, isImage: true });
    const handle = ELEMENT_HANDLERS.get(name);
    if (handle !== undefined) {
      handle(w, name, tag.end, hidden);
      if (w.done) return;
    }
  }
}

const TEXT_URL_RE = /\b(?:(?:https?|hxxps?|ftp):\/\/|www\.)[^\s<>"'`{}|\\^[\]]+/gi;

/** Characters a text URL does not end with (`see http://x/y.` or `(http://x/y)`). */
const TRAILING_PUNCTUATION = `.,;:!?)]>'"*`;

/** URLs written in plain text (scheme URLs and bare `www.` hosts). */
function extractTextUrls(
  text: string,
  c: Collector,
  source: UrlSource = 'text',
  extra: UrlExtra = {},
): void {
  const t = text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
  for (const m of t.matchAll(TEXT_URL_RE)) {
    if (c.full()) return;
    let u = trimEndOf(m[0], TRAILING_PUNCTUATION);
    // "(see http://x/y)" keeps its brackets balanced
    if (u.includes('(') && !u.includes(')') && m[0].includes(')')) u += ')';
    c.add(u, source, extra);
  }
}

/** What a document decoder found: link targets as written, and text to search for URLs. */
export interface FoundLinks {
  /** Link targets (a PDF /URI, an external relationship, a calendar URL property, a QR code). */
  targets: string[];
  /** Free text that may hold URLs (a calendar DESCRIPTION, a QR code that is not a URL). */
  texts: string[];
  /** HTML whose links count (a calendar's X-ALT-DESC). */
  html?: string[];
}

/**
 * The URLs of links found in an attachment, parsed and normalised as the body's links are, each
 * marked with where it was found (`source` and the attachment). Deduplicated, at most `max`.
 */
export function urlsOfFoundLinks(
  found: FoundLinks,
  source: DocumentLinkSource,
  attachment: { index: number; name: string },
  max: number,
): ExtractedUrl[] {
  const c = new Collector(max, undefined);
  const extra: UrlExtra = { attachment: attachment.index, attachmentName: attachment.name };
  for (const t of found.targets) c.add(t, source, extra);
  for (const t of found.texts) extractTextUrls(t, c, source, extra);
  for (const h of found.html ?? []) {
    const inHtml = new Collector(max, undefined);
    extractHtmlUrls(h, inHtml);
    for (const u of inHtml.out) c.add(u.url, source, extra);
  }
  return c.out;
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
  // One message's URLs are read by the analyzers' view and by the job's evidence: the extraction
  // runs once per message and cap (a copy of the list each time; its entries are shared). The
  // workflow engine hands each analyzer a shallow copy of the Email (its own analysis_context) with
  // the same headers object, so the cache is keyed on that object when there is one, and an entry
  // is used only for the same bodies (compared by identity first, so a hit costs nothing).
  const max = opts.maxUrls ?? 500;
  const key: object = (email as { headers?: object }).headers ?? email;
  const cached = extracted.get(key);
  if (cached?.max === max && cached.html === email.body_html && cached.text === email.body_text) {
    return cached.urls.slice();
  }
  const urls = extractAll(email, max);
  extracted.set(key, { max, urls, html: email.body_html, text: email.body_text });
  return urls.slice();
}

/** Extractions already made, by message (bodies are never changed after parsing). */
const extracted = new WeakMap<
  object,
  { max: number; urls: ExtractedUrl[]; html: string | undefined; text: string | undefined }
>();

function extractAll(email: Pick<Email, 'body_text' | 'body_html'>, max: number): ExtractedUrl[] {
  const c = new Collector(max, undefined);
  if (email.body_html) extractHtmlUrls(email.body_html, c);
  const cText = new Collector(max, undefined);
  if (email.body_text) extractTextUrls(email.body_text, cText);
  // a text URL that the HTML already has adds nothing
  const known = new Set(c.out.map((u) => u.url));
  for (const u of cText.out) {
    if (c.full()) break;
    if (!known.has(u.url)) c.out.push(u);
  }
  return c.out;
}
