import { createHash } from 'node:crypto';
import {
  type AnalysisContext,
  type AnalysisResult,
  ATTACHMENT_INDICATOR_TYPES,
  DOCUMENT_SOURCES,
  type DocumentLink,
  documentLinksIn,
  type Email,
  EVIDENCE_LIMITS,
  type Evidence,
  type EvidenceAttachment,
  EvidenceListMatch,
  type EvidenceRef,
  EvidenceScore,
  type EvidenceUrl,
  type Indicator,
  type ReceivedHop,
  searchTermsOf,
  URL_INDICATOR_TYPES,
} from '@trawl/contracts';
import {
  type AttachmentSniff,
  type ExtractedUrl,
  extractUrls,
  type HtmlFeatures,
  isPrivateIp,
  type PdfFlags,
  readAuthResults,
  sniffAttachment,
  urlsOfDocumentLinks,
} from '@trawl/mail';
import type { RunOutcome } from '@trawl/workflow-engine';

/**
 * The evidence of a job (issue 16), built by the orchestrator when a job finishes, from the Email it
 * already holds: headers, the Received path, the authentication results (read as the headers
 * analyzer reads them), every URL (body text, HTML, text and HTML attachments, and the links inside
 * PDF, Office, calendar and QR-code attachments that the attachments analyzer found) and every
 * attachment (sniffed from its bytes). Bounded by EVIDENCE_LIMITS. It is on the hot path: one pass
 * over each part, no network, no decompression.
 */
export interface EvidenceOptions {
  /** Trusted authserv-ids (the headers analyzer's `authserv_ids`); none: the nearest hop. */
  authservIds?: readonly string[] | undefined;
  /**
   * Links found inside attachments (PDF, Office, calendar, QR) by the attachments analyzer, read
   * from the run's analysis context: decoding attachments is not done here (the queue's thread).
   */
  documentLinks?: readonly DocumentLink[] | undefined;
}

const L = EVIDENCE_LIMITS;
/** Attachments at most this large are decoded and sniffed (the gateway caps them at 25 MiB). */
const SNIFF_MAX_BYTES = 25 * 1024 * 1024;
/** Text / HTML attachments at most this large are searched for URLs. */
const URL_SCAN_MAX_BYTES = 1024 * 1024;

function cut(s: string, n: number = L.chars): string {
  return s.length > n ? s.slice(0, n) : s;
}

function rawValues(email: Email, name: string): string[] {
  const v = email.headers.raw_headers?.[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).slice(0, 50);
}

/** The addresses (`local@domain` runs) of a header value such as Reply-To or Return-Path. */
function addressesIn(value: string): string[] {
  const out: string[] = [];
  for (const run of value.slice(0, 4096).split(/[\s<>"(),;:]+/)) {
    const at = run.indexOf('@', 1);
    if (at >= 0 && at <= run.length - 2) out.push(run);
  }
  return out;
}

function capList<T>(list: T[], max: number, what: string, truncated: Record<string, number>): T[] {
  if (list.length <= max) return list;
  truncated[what] = list.length - max;
  return list.slice(0, max);
}

/** `Name <a@b>` → {address, display_name}; the Email's sender is the address. */
function fromOf(email: Email): Evidence['message']['from'] {
  const raw = rawValues(email, 'from')[0] ?? '';
  const lt = raw.indexOf('<');
  const name =
    lt > 0
      ? raw
          .slice(0, lt)
          .trim()
          .replace(/^"(.*)"$/, '$1')
          .trim()
      : '';
  return name
    ? { address: cut(email.headers.sender), display_name: cut(name) }
    : { address: cut(email.headers.sender) };
}

const IPV4 = /\b(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\b/;
const BRACKET_IP = /\[(?:IPv6:)?([0-9A-Fa-f:.]{3,45})\]/;

/** One Received header: `from X (… [ip])  by Y … ; date`. Bounded slices, simple expressions. */
function hopOf(value: string): ReceivedHop {
  const v = value.slice(0, 2000).replace(/\s+/g, ' ');
  const hop: ReceivedHop = {};
  const semi = v.lastIndexOf(';');
  const head = semi === -1 ? v : v.slice(0, semi);
  if (semi !== -1) {
    const d = v.slice(semi + 1).trim();
    if (d) hop.date = cut(d, 64);
  }
  const byAt = head.search(/\bby\s/i);
  const fromPart = byAt === -1 ? head : head.slice(0, byAt);
  const from = /\bfrom\s+([^\s(;]{1,253})/i.exec(fromPart);
  if (from?.[1]) hop.from = cut(from[1].toLowerCase(), 253);
  const by = byAt === -1 ? null : /^by\s+([^\s(;]{1,253})/i.exec(head.slice(byAt));
  if (by?.[1]) hop.by = cut(by[1].toLowerCase(), 253);
  const ip = BRACKET_IP.exec(fromPart)?.[1] ?? IPV4.exec(fromPart)?.[0];
  if (ip && (ip.includes('.') || ip.includes(':'))) hop.ip = cut(ip, 45);
  return hop;
}

function receivedOf(email: Email, truncated: Record<string, number>): Evidence['received'] {
  const all = rawValues(email, 'received');
  const hops = capList(all, L.hops, 'received', truncated).map(hopOf);
  // The topmost hop with a public address: the host that handed the message to the receiver.
  const sending = hops.find((h) => h.ip && !isPrivateIp(h.ip))?.ip;
  return sending ? { sending_ip: sending, hops } : { hops };
}

function decodedOf(u: ExtractedUrl): string {
  let d = u.url;
  if (u.unicodeHost && u.host) d = d.replace(u.host, u.unicodeHost);
  try {
    d = decodeURI(d);
  } catch {
    // a malformed escape: keep it as written
  }
  return cut(d, L.urlChars);
}

const DOCUMENT_SOURCE_SET = new Set<string>(DOCUMENT_SOURCES);

function urlOf(u: ExtractedUrl, place: EvidenceUrl['found_in'], attachment?: number): EvidenceUrl {
  const e: EvidenceUrl = {
    url: cut(u.url, L.urlChars),
    decoded: decodedOf(u),
    host: cut(u.host),
    found_in: place,
    element: u.source,
  };
  if (u.registrableDomain) e.registrable_domain = cut(u.registrableDomain);
  if (u.anchorText) e.text = cut(u.anchorText);
  if (attachment !== undefined) e.attachment = attachment;
  if (DOCUMENT_SOURCE_SET.has(u.source)) e.source = u.source as NonNullable<EvidenceUrl['source']>;
  if (u.attachmentName !== undefined) e.attachment_name = cut(u.attachmentName);
  if (u.hidden) e.hidden = true;
  return e;
}

/**
 * The attachments' URLs with the links the attachments analyzer found inside documents (parsed,
 * not decoded again): a link already read from the same attachment's text (a calendar file is
 * text) gets its source there rather than a second entry.
 */
function withDocumentLinks(fromText: EvidenceUrl[], links: readonly DocumentLink[]): EvidenceUrl[] {
  const out = [...fromText];
  const known = new Map(out.map((e) => [`${e.attachment}\u0000${e.url}`, e]));
  for (const u of urlsOfDocumentLinks(links, L.urls)) {
    const e = urlOf(u, 'attachment', u.attachment);
    const same = known.get(`${e.attachment}\u0000${e.url}`);
    if (same === undefined) out.push(e);
    else {
      if (e.source) same.source = e.source;
      if (e.attachment_name) same.attachment_name = e.attachment_name;
    }
  }
  return out;
}

/** The findings a sniff's PDF flags and HTML features name, in the order they are listed. */
const FLAG_FINDINGS: {
  pdf: Record<keyof PdfFlags, string>;
  html: Record<keyof HtmlFeatures, string>;
} = {
  pdf: {
    javascript: 'pdf_javascript',
    openAction: 'pdf_open_action',
    launch: 'pdf_launch',
    embeddedFile: 'pdf_embedded_file',
    acroForm: 'pdf_form',
    uri: 'pdf_links',
  },
  html: {
    scripts: 'html_scripts',
    forms: 'html_form',
    passwordInputs: 'html_password_input',
    metaRefresh: 'html_meta_refresh',
    eventHandlers: 'html_event_handlers',
    foreignObject: 'svg_foreign_object',
  },
};

/** The names of the flags that are set (true or a count above 0) in `flags`, as `names` lists them. */
function flagged<K extends string>(
  flags: Record<K, boolean | number> | undefined,
  names: Record<K, string>,
): string[] {
  if (!flags) return [];
  return (Object.keys(names) as K[]).filter((k) => flags[k]).map((k) => names[k]);
}

function findingsOf(s: AttachmentSniff): string[] {
  const f: string[] = [];
  if (s.hasMacros) f.push('macros');
  if (s.embeddedObjects) f.push('embedded_objects');
  if (s.encrypted) f.push('encrypted');
  f.push(...flagged(s.pdfFlags, FLAG_FINDINGS.pdf), ...flagged(s.htmlFeatures, FLAG_FINDINGS.html));
  return f;
}

interface AttachmentsOut {
  list: EvidenceAttachment[];
  urls: EvidenceUrl[];
}

function attachmentsOf(email: Email, truncated: Record<string, number>): AttachmentsOut {
  const all = email.attachments ?? [];
  const out: AttachmentsOut = { list: [], urls: [] };
  const list = capList(all, L.attachments, 'attachments', truncated);
  for (let i = 0; i < list.length; i++) {
    const a = list[i];
    if (!a) continue;
    const e: EvidenceAttachment = {
      filename: cut(a.filename),
      declared_type: cut(a.content_type),
    };
    if (a.size !== undefined) e.size = a.size;
    if (a.sha256) e.sha256 = a.sha256;
    if (a.content !== undefined && (a.size ?? 0) <= SNIFF_MAX_BYTES) {
      const bytes = Buffer.from(a.content, 'base64');
      e.size = bytes.length;
      e.sha256 ??= createHash('sha256').update(bytes).digest('hex');
      const s = sniffAttachment(bytes, a.filename, a.content_type);
      e.sniffed_type = cut(s.detectedType);
      e.kind = s.kind;
      if (!s.typeMatches) e.type_mismatch = true;
      if (s.archiveEntries?.length) {
        e.contents = s.archiveEntries.slice(0, L.entries).map((n) => cut(n));
        if (s.archiveEntries.length > L.entries) {
          truncated[`attachments.${i}.contents`] = s.archiveEntries.length - L.entries;
        }
      }
      const f = findingsOf(s);
      if (f.length) e.findings = f;
      if (
        (s.kind === 'html' || s.kind === 'svg' || s.kind === 'text') &&
        bytes.length <= URL_SCAN_MAX_BYTES
      ) {
        const text = bytes.toString('utf8');
        const found =
          s.kind === 'text'
            ? extractUrls({ body_text: text }, { maxUrls: L.urls })
            : extractUrls({ body_html: text }, { maxUrls: L.urls });
        for (const u of found) out.urls.push(urlOf(u, 'attachment', i));
      }
    }
    out.list.push(e);
  }
  return out;
}

/** Builds the evidence of one message. */
export function buildEvidence(email: Email, opts: EvidenceOptions = {}): Evidence {
  const truncated: Record<string, number> = {};
  const h = email.headers;
  const replyTo = rawValues(email, 'reply-to').flatMap(addressesIn);
  const returnPath = rawValues(email, 'return-path').flatMap(addressesIn)[0];
  const messageId = rawValues(email, 'message-id')[0]?.trim();
  const message: Evidence['message'] = {
    subject: cut(h.subject),
    from: fromOf(email),
    reply_to: capList(replyTo, L.recipients, 'reply_to', truncated).map((a) => cut(a)),
    to: capList(h.recipients, L.recipients, 'to', truncated).map((a) => cut(a)),
    cc: capList(h.cc ?? [], L.recipients, 'cc', truncated).map((a) => cut(a)),
    bcc: capList(h.bcc ?? [], L.recipients, 'bcc', truncated).map((a) => cut(a)),
    date: cut(h.date),
  };
  if (returnPath) message.return_path = cut(returnPath.replace(/^<|>$/g, ''));
  if (messageId) message.message_id = cut(messageId);

  const a = readAuthResults(email, opts.authservIds ?? []);
  const auth: Evidence['auth'] = {
    spf: a.spf,
    dkim: a.dkim,
    dmarc: a.dmarc,
    arc: a.arc,
    dkim_pass_domains: a.dkim_pass_domains.slice(0, 20).map((d) => cut(d)),
    authserv_id: cut(a.authserv_id),
    via_arc: a.via_arc,
    verified: a.verified,
  };
  if (a.dmarc_from) auth.dmarc_from = cut(a.dmarc_from);

  const atts = attachmentsOf(email, truncated);
  // the default cap, as the analyzers' view reads them: the extraction is shared (one per Email)
  const body = extractUrls(email)
    .slice(0, L.urls + 1)
    .map((u) => urlOf(u, u.source === 'text' ? 'text' : 'html'));
  const urls = capList(
    [...body, ...withDocumentLinks(atts.urls, opts.documentLinks ?? [])],
    L.urls,
    'urls',
    truncated,
  );

  const ev: Evidence = {
    message,
    received: receivedOf(email, truncated),
    auth,
    urls,
    attachments: atts.list,
  };
  if (Object.keys(truncated).length) ev.truncated = truncated;
  return ev;
}

const HEADER_TYPES: Record<string, string> = {
  reply_to_mismatch: 'reply_to',
  return_path_mismatch: 'return_path',
  display_name_spoofing: 'from',
  domain_spoofing: 'from',
  vip_impersonation: 'from',
  first_time_sender: 'from',
  suspicious_sender: 'from',
  internal_domain_lookalike: 'from',
};
const URL_TYPES = new Set<string>(URL_INDICATOR_TYPES);
const ATTACHMENT_TYPES = new Set<string>(ATTACHMENT_INDICATOR_TYPES);
const BODY_TYPES = new Set([
  'urgency_language',
  'threat_language',
  'reward_language',
  'credential_request',
  'payment_request',
  'negative_sentiment',
  'spam_language',
  'text_obfuscation',
  'suspicious_content',
]);
const AUTH_METHODS = ['dmarc', 'dkim', 'spf', 'arc'] as const;

/** Lower-case needles of the evidence lists, matched against indicator texts. */
interface Needles {
  attachments: { name: string; i: number }[];
  urls: { needles: string[]; i: number }[];
}

function needlesOf(ev: Evidence): Needles {
  const attachments: Needles['attachments'] = [];
  ev.attachments.forEach((a, i) => {
    const name = a.filename.toLowerCase();
    if (name.length >= 3) attachments.push({ name, i });
  });
  const urls: Needles['urls'] = [];
  ev.urls.forEach((u, i) => {
    const n = [u.url.toLowerCase(), u.decoded.toLowerCase()];
    if (u.host) n.push(u.host);
    if (u.registrable_domain) n.push(u.registrable_domain);
    urls.push({ needles: n, i });
  });
  return { attachments, urls };
}

/** The URL whose longest needle the text holds: a full URL beats its host, a host its domain. */
function urlNamed(text: string, n: Needles): EvidenceRef | undefined {
  let best: { i: number; len: number } | undefined;
  for (const u of n.urls) {
    for (const s of u.needles) {
      if (s.length > (best?.len ?? 3) && text.includes(s)) best = { i: u.i, len: s.length };
    }
  }
  return best ? { kind: 'url', index: best.i } : undefined;
}

/** The evidence item an indicator is about, from its type and the names its text mentions. */
function refOf(ind: Indicator, ev: Evidence, n: Needles): EvidenceRef | undefined {
  const text = ind.value.toLowerCase();
  if (ind.type === 'auth_failure' || ind.type.startsWith('auth')) {
    const m = AUTH_METHODS.find((x) => text.includes(x));
    return { kind: 'auth', name: m ?? 'dmarc' };
  }
  const header = HEADER_TYPES[ind.type];
  if (header) return { kind: 'header', name: header };
  // a URL indicator names its link first (one found in a document also names the document)
  const link = URL_TYPES.has(ind.type) ? urlNamed(text, n) : undefined;
  if (link) return link;
  for (const a of n.attachments)
    if (text.includes(a.name)) return { kind: 'attachment', index: a.i };
  const named = URL_TYPES.has(ind.type) ? undefined : urlNamed(text, n);
  if (named) return named;
  if (URL_TYPES.has(ind.type) && ev.urls.length === 1) return { kind: 'url', index: 0 };
  if (ATTACHMENT_TYPES.has(ind.type) && ev.attachments.length === 1) {
    return { kind: 'attachment', index: 0 };
  }
  if (BODY_TYPES.has(ind.type)) return { kind: 'body' };
  if (ind.type === 'header_anomaly') {
    return text.includes('received') ? { kind: 'received' } : { kind: 'header' };
  }
  if (ind.type === 'brand_impersonation') return { kind: 'header', name: 'from' };
  return undefined;
}

/**
 * The result with its evidence, each indicator naming the item it is about (an indicator that
 * already names one keeps it).
 */
export function withEvidence(result: AnalysisResult, ev: Evidence): AnalysisResult {
  const n = needlesOf(ev);
  const indicators = result.indicators.map((ind) => {
    if (ind.evidence) return ind;
    const ref = refOf(ind, ev, n);
    return ref ? { ...ind, evidence: ref } : ind;
  });
  return { ...result, indicators, evidence: ev };
}

const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * The score by symbol and group of the last stage whose analyzer answered one (the scorer's
 * analyzer_details: contributions, groups, log_odds, bias), or undefined when none did.
 */
export function scoreOf(context: AnalysisContext): EvidenceScore | undefined {
  let found: EvidenceScore | undefined;
  for (const [stage, sc] of Object.entries(context)) {
    for (const [id, a] of Object.entries(sc.analyzers)) {
      const d = a.analyzer_details;
      if (!Array.isArray(d.contributions) || !finite(d.log_odds)) continue;
      const candidate = EvidenceScore.safeParse({
        by: `${stage}.${id}`,
        probability: finite(d.probability) ? d.probability : 0,
        log_odds: d.log_odds,
        bias: finite(d.bias) ? d.bias : 0,
        contributions: d.contributions.slice(0, 30),
        groups: d.groups ?? {},
      });
      if (candidate.success) found = candidate.data;
    }
  }
  return found;
}

/**
 * The allow and block list entries the `lists` analyzer matched (its analyzer_details.matches,
 * issue 32), or undefined when it did not run or matched nothing.
 */
function listsOf(context: AnalysisContext): EvidenceListMatch[] | undefined {
  for (const sc of Object.values(context)) {
    const m = sc.analyzers.lists?.analyzer_details.matches;
    if (!Array.isArray(m) || m.length === 0) continue;
    const parsed = EvidenceListMatch.array().max(50).safeParse(m.slice(0, 50));
    if (parsed.success) return parsed.data;
  }
  return undefined;
}

/**
 * The outcome of a run with its evidence (a completed one: in its result) and the job's search
 * terms. Evidence is best effort: when building it throws (a bug), the outcome is kept as it is and
 * `error` says why.
 */
export function attachEvidence(
  email: Email,
  outcome: RunOutcome,
  opts: EvidenceOptions = {},
): { outcome: RunOutcome; terms?: string[]; error?: unknown } {
  try {
    const ev = buildEvidence(email, {
      ...opts,
      documentLinks: opts.documentLinks ?? documentLinksIn(outcome.context),
    });
    if (outcome.status === 'completed') {
      const score = scoreOf(outcome.context);
      const lists = listsOf(outcome.context);
      const result = withEvidence(outcome.result, {
        ...ev,
        ...(score ? { score } : {}),
        ...(lists ? { lists } : {}),
      });
      return { outcome: { ...outcome, result }, terms: searchTermsOf(ev, result) };
    }
    return { outcome, terms: searchTermsOf(ev) };
  } catch (error) {
    return { outcome, error };
  }
}
