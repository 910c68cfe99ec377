import type { Email } from '@trawl/contracts';
import { documentUrls, extractUrls, guessLanguage, htmlToText, sniffAttachment } from '@trawl/mail';
import { getDomain, getPublicSuffix } from 'tldts';
import { type AuthResults, readAuthResults } from './auth-results.ts';
import { domainOf, firstHeader, headerValues, parseAddressHeader } from './header-values.ts';
import { isNonRoutableIp } from './ip.ts';
import { type MachineReport, machineReport } from './machine-mail.ts';
import { MAX_SCAN_CHARS } from './normalize.ts';

/** One URL of the message as the analyzers and rules see it. */
export interface UrlView {
  url: string;
  scheme: string;
  /** Lower-case host, IDN in punycode ('' for data:/javascript:/mailto:). */
  host: string;
  /** Registrable domain (eTLD+1) of host, '' when none (IP, data:, ...). */
  domain: string;
  tld: string;
  is_ip: boolean;
  /** An IP host no one outside a private network reaches (10/8, 192.168/16, 127/8, ::1 …). */
  private_ip: boolean;
  /** Where it came from: text, href, src, form, css, meta, area. */
  source: string;
  anchor_text: string;
  /** A domain shown in the anchor text, '' when the text does not show one. */
  anchor_domain: string;
  hidden: boolean;
  is_image: boolean;
  form_has_password: boolean;
  /** The host as written disguises the host (%-escapes, an IPv4 address as one number or hex). */
  host_obfuscated: boolean;
  /** For a link inside an attachment (source pdf, office, calendar, qr): the attachment's name. */
  attachment_name?: string;
}

export interface AttachmentView {
  filename: string;
  /** Lower-case extensions, last first: "invoice.pdf.exe" → ["exe", "pdf"]. */
  extensions: string[];
  content_type: string;
  size: number;
  /** Sniffed kind: executable, script, archive, office, pdf, html, svg, image, text, shortcut, disk_image, unknown. */
  kind: string;
  detected_type: string;
  has_macros: boolean;
  archive_entries: string[];
  encrypted: boolean;
  html_scripts: boolean;
  html_forms: boolean;
  html_password_inputs: boolean;
  pdf_flags: string[];
  /** Decoded bytes when the content was sent (not exposed to rules). */
  bytes?: Buffer;
}

export interface PartyView {
  address: string;
  domain: string;
  /** Registrable domain of `domain`. */
  org_domain: string;
  display_name: string;
}

/** The normalised view of an email that analyzers and CEL rules read (documented in docs/analyzers.md). */
export interface MailView {
  from: PartyView;
  reply_to: PartyView[];
  return_path: PartyView | undefined;
  sender_header: PartyView | undefined;
  to: string[];
  subject: string;
  /** body_text, plus the text of body_html when it differs; bounded. */
  text: string;
  /** Text of body_html only ('' when none). */
  html_text: string;
  html: string;
  has_html: boolean;
  language: string;
  urls: UrlView[];
  attachments: AttachmentView[];
  auth: AuthResults;
  message_id: string;
  message_id_domain: string;
  date: string;
  list_id: string;
  /** Lower-case header names present. */
  header_names: string[];
  /** What standard machine mail the message is by its structure (shared/machine-mail.ts). */
  report: MachineReport | undefined;
}

/** Whether the message has HTML in which `re` matches (the first 200,000 characters: bounded work). */
export function htmlMatches(v: MailView, re: RegExp): boolean {
  return v.has_html && re.test(v.html.slice(0, 200_000));
}

/** Answers of the public-suffix list by host, bounded: the same hosts come back message after message. */
const orgDomains = new Map<string, string>();
const publicSuffixes = new Map<string, string>();
const MEMO_HOSTS = 10_000;

export function orgDomain(host: string | undefined): string {
  if (!host) return '';
  let d = orgDomains.get(host);
  if (d === undefined) {
    const h = host.toLowerCase();
    d = getDomain(h, { allowPrivateDomains: false }) ?? h;
    if (orgDomains.size >= MEMO_HOSTS) orgDomains.clear();
    orgDomains.set(host, d);
  }
  return d;
}

/** The public suffix of a host ("co.uk"), or its last label when the list knows none. */
function publicSuffix(host: string): string {
  let t = publicSuffixes.get(host);
  if (t === undefined) {
    t = getPublicSuffix(host) ?? host.split('.').pop() ?? '';
    if (publicSuffixes.size >= MEMO_HOSTS) publicSuffixes.clear();
    publicSuffixes.set(host, t);
  }
  return t;
}

function party(value: string | undefined): PartyView | undefined {
  if (!value) return undefined;
  const p = parseAddressHeader(value);
  if (!p) return undefined;
  const domain = domainOf(p.address) ?? '';
  return {
    address: p.address,
    domain,
    org_domain: orgDomain(domain),
    display_name: p.display_name,
  };
}

function str(o: Record<string, unknown>, k: string): string {
  const v = o[k];
  return typeof v === 'string' ? v : '';
}
function bool(o: Record<string, unknown>, k: string): boolean {
  return o[k] === true;
}

function toUrlView(raw: object): UrlView {
  const o = raw as Record<string, unknown>;
  const url = str(o, 'url');
  let scheme = str(o, 'scheme').toLowerCase().replace(/:$/, '');
  let host = str(o, 'host').toLowerCase();
  if (!scheme || (!host && /^https?:/i.test(url))) {
    try {
      const u = new URL(url);
      scheme ||= u.protocol.replace(/:$/, '');
      host ||= u.hostname.toLowerCase();
    } catch {
      /* leave empty */
    }
  }
  host = host.replace(/^\[|\]$/g, '');
  const isIp = bool(o, 'isIp') || /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');
  const domain = isIp ? '' : str(o, 'registrableDomain') || (host ? orgDomain(host) : '');
  const tld = isIp || !host ? '' : publicSuffix(host);
  return {
    url: url.length > 2048 ? url.slice(0, 2048) : url,
    scheme,
    host,
    domain,
    tld,
    is_ip: isIp && host.length > 0,
    private_ip: isIp && host.length > 0 && isNonRoutableIp(host),
    source: str(o, 'source') || 'text',
    anchor_text: str(o, 'anchorText').slice(0, 500),
    anchor_domain: str(o, 'anchorDomain').toLowerCase(),
    hidden: bool(o, 'hidden'),
    is_image: bool(o, 'isImage'),
    form_has_password: bool(o, 'formHasPassword'),
    host_obfuscated: bool(o, 'hostObfuscated'),
    ...(typeof o.attachmentName === 'string' ? { attachment_name: o.attachmentName } : {}),
  };
}

/**
 * The links inside the message's attachments (PDF, Office, calendar, QR codes: documentUrls of
 * @trawl/mail) as the URL techniques see links. Not part of the view: decoding attachments costs,
 * so only the analyzers that look at these links ask (urls, attachments), once per message.
 */
export function documentUrlViews(email: Email): UrlView[] {
  return documentUrls(email).map((u) => toUrlView(u));
}

function extensionsOf(filename: string): string[] {
  const base = filename.toLowerCase().split(/[\\/]/).pop() ?? '';
  const parts = base
    .split('.')
    .slice(1)
    .map((p) => p.trim());
  return parts.reverse().filter((p) => p.length > 0 && p.length <= 12);
}

function toAttachmentView(a: NonNullable<Email['attachments']>[number]): AttachmentView {
  const bytes = a.content !== undefined ? Buffer.from(a.content, 'base64') : undefined;
  let sniff: Record<string, unknown> = {};
  if (bytes) {
    try {
      sniff = sniffAttachment(bytes, a.filename, a.content_type) as unknown as Record<
        string,
        unknown
      >;
    } catch {
      sniff = {};
    }
  }
  const html = (sniff.htmlFeatures ?? {}) as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' ? v : v === true ? 1 : 0);
  const entries = Array.isArray(sniff.archiveEntries)
    ? (sniff.archiveEntries as unknown[])
        .filter((x): x is string => typeof x === 'string')
        .slice(0, 500)
    : [];
  const pdf = sniff.pdfFlags;
  const pdfFlags = Array.isArray(pdf)
    ? pdf.filter((x): x is string => typeof x === 'string')
    : pdf && typeof pdf === 'object'
      ? Object.entries(pdf as Record<string, unknown>)
          .filter(([, v]) => v === true)
          .map(([k]) => k)
      : [];
  return {
    filename: a.filename,
    extensions: extensionsOf(a.filename),
    content_type: (a.content_type ?? '').toLowerCase(),
    size: a.size ?? bytes?.length ?? 0,
    kind: str(sniff, 'kind') || 'unknown',
    detected_type: str(sniff, 'detectedType'),
    has_macros: bool(sniff, 'hasMacros'),
    archive_entries: entries,
    encrypted: bool(sniff, 'encrypted'),
    html_scripts: num(html.scripts) > 0,
    html_forms: num(html.forms) > 0,
    html_password_inputs: num(html.passwordInputs) > 0,
    pdf_flags: pdfFlags,
    ...(bytes ? { bytes } : {}),
  };
}

function bound(s: string): string {
  return s.length > MAX_SCAN_CHARS ? s.slice(0, MAX_SCAN_CHARS) : s;
}

const views = new WeakMap<object, MailView>();

/**
 * Builds (once per message: cached on the headers object, which the engine passes through
 * unchanged) the normalised view of an email.
 */
export function viewOf(email: Email): MailView {
  const hit = views.get(email.headers);
  if (hit && hit.subject === email.headers.subject) return hit;
  const v = buildView(email);
  views.set(email.headers, v);
  return v;
}

/**
 * Splits a header value at the commas outside double quotes: what
 * `v.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/)` gives (a comma followed by an even number of `"`), in
 * one pass; the lookahead read the rest of the value again at every comma (quadratic).
 */
function splitOutsideQuotes(v: string): string[] {
  let quotesAfter = 0;
  for (let i = 0; i < v.length; i++) if (v.charCodeAt(i) === 0x22) quotesAfter++;
  const out: string[] = [];
  let from = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c === 0x22 /* " */) quotesAfter--;
    else if (c === 0x2c /* , */ && quotesAfter % 2 === 0) {
      out.push(v.slice(from, i));
      from = i + 1;
    }
  }
  out.push(v.slice(from));
  return out;
}

/**
 * What `html.replace(/<[^>]*>/g, ' ')` answers: each `<` to the next `>` made one space. A scan with
 * indexOf; the regex read the rest of the text again at every `<` without a `>` after it.
 */
export function stripTags(html: string): string {
  return blankSpans(html, '<', '>');
}

/**
 * `s` with each span from an `open` to the next `close` after it (single characters) made one space (a span without a
 * `close` and what follows it are kept). A scan with indexOf, linear in the length of `s`.
 */
export function blankSpans(s: string, open: string, close: string): string {
  let out = '';
  let from = 0;
  for (let at = s.indexOf(open); at !== -1; at = s.indexOf(open, from)) {
    const end = s.indexOf(close, at + 1);
    if (end === -1) break;
    out += `${s.slice(from, at)} `;
    from = end + 1;
  }
  return from === 0 ? s : out + s.slice(from);
}

function buildView(email: Email): MailView {
  const fromHeader = firstHeader(email, 'from');
  const parsedFrom = party(fromHeader);
  // a From with no usable address: the sender the message names first (a Sender header appended
  // below it changes nothing), else the parser's
  const from = parsedFrom ??
    party(firstHeader(email, 'sender')) ??
    party(email.headers.sender) ?? { address: '', domain: '', org_domain: '', display_name: '' };
  // "Mercado Livre <contato@mercadolivre>": an address that is not one still comes with the name
  // it poses under
  if (!parsedFrom && fromHeader && !from.display_name) {
    const lt = fromHeader.lastIndexOf('<');
    if (lt > 0)
      from.display_name = fromHeader
        .slice(0, lt)
        .trim()
        .replace(/^"(.*)"$/s, '$1')
        .trim();
  }
  if (!from.address) {
    const d = domainOf(email.headers.sender) ?? '';
    Object.assign(from, {
      address: email.headers.sender.toLowerCase(),
      domain: d,
      org_domain: orgDomain(d),
    });
  }
  const reply_to = headerValues(email, 'reply-to')
    .flatMap(splitOutsideQuotes)
    .map((v) => party(v))
    .filter((p): p is PartyView => p !== undefined)
    .slice(0, 10);
  const html = bound(email.body_html ?? '');
  let htmlText = '';
  if (html) {
    try {
      htmlText = bound(htmlToText(html));
    } catch {
      htmlText = bound(stripTags(html));
    }
  }
  const plain = bound(email.body_text ?? '');
  const text = bound(
    plain && htmlText && !plain.includes(htmlText.slice(0, 200).trim())
      ? `${plain}\n${htmlText}`
      : plain || htmlText,
  );
  let urls: UrlView[] = [];
  try {
    urls = extractUrls(email)
      .slice(0, 500)
      .map((u) => toUrlView(u));
  } catch {
    urls = [];
  }
  let language = email.language ?? '';
  if (!language) {
    try {
      language = guessLanguage(`${email.headers.subject}\n${text.slice(0, 4000)}`) ?? '';
    } catch {
      language = '';
    }
  }
  const mid = firstHeader(email, 'message-id') ?? '';
  const midDomain = /@([A-Za-z0-9.-]+)>?\s*$/.exec(mid.trim())?.[1]?.toLowerCase() ?? '';
  return {
    from,
    reply_to,
    return_path: party(firstHeader(email, 'return-path')),
    sender_header: party(firstHeader(email, 'sender')),
    to: [...email.headers.recipients, ...(email.headers.cc ?? [])].slice(0, 100),
    subject: email.headers.subject,
    text,
    html_text: htmlText,
    html,
    has_html: html.length > 0,
    language,
    urls,
    attachments: (email.attachments ?? []).slice(0, 100).map(toAttachmentView),
    auth: readAuthResults(email),
    message_id: mid,
    message_id_domain: midDomain,
    date: email.headers.date,
    list_id: firstHeader(email, 'list-id') ?? '',
    header_names: Object.keys(email.headers.raw_headers ?? {}),
    report: machineReport(email, text, urls, from.org_domain),
  };
}
