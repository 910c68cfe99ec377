import type { Email } from '@trawl/contracts';
import { firstHeader } from './header-values.ts';
import { brandOwning, hostInList, type Lexicons } from './lexicons.ts';

/**
 * Standard machine mail, recognised by its structure: what mail systems write about other mail.
 * Fake bounces are a common lure, and every part of such a structure can be forged, so a
 * recognised report explains only its own wording (see lexicon-hits.ts: the delivery phrases and
 * the alarm they carry), never a link, a form, an attachment or who sent it. The view holds the
 * structure; `reportOf` says whether it is a report once the lexicons can judge its links.
 *
 * - `delivery_status`: a delivery status notification (RFC 3464): `multipart/report;
 *   report-type=delivery-status` with its machine-readable part (per-recipient `Final-Recipient`
 *   or `Original-Recipient` with an `Action` or `Status`), sent with the null return path.
 * - `disposition`: a read receipt (RFC 8098): `report-type=disposition-notification` with its
 *   `Disposition` field.
 * - `tls_report`: an SMTP TLS report (RFC 8460): `report-type=tlsrpt` or a `TLS-Report-Domain`
 *   header, with the report attached (`application/tlsrpt+gzip` or `+json`).
 * - `dmarc_report`: a DMARC aggregate report (RFC 7489 section 7.2.1.1): the subject "Report
 *   Domain: … Submitter: …" and the report attached as XML, gzip or zip.
 */
type MachineReportKind = 'delivery_status' | 'disposition' | 'tls_report' | 'dmarc_report';

export interface MachineReport {
  kind: MachineReportKind;
  /** What the structure was recognised by, for the evidence. */
  by: string;
  /** The report's own web links to anywhere but its reporter's domain (see reportOf). */
  elsewhere: LinkOf[];
}

/** The value of a `name=value` parameter of a Content-Type, lower-case, quotes removed. */
function ctParam(ct: string, name: string): string {
  const lower = ct.slice(0, 2000).toLowerCase();
  for (const part of lower.split(';').slice(1, 20)) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name)
      return part
        .slice(eq + 1)
        .trim()
        .replace(/^"|"$/g, '');
  }
  return '';
}

/** Whether a line of `text` starts with one of the field names (case-insensitive, `Name:`). */
function hasField(text: string, names: readonly string[]): boolean {
  const head = text.slice(0, 20_000).toLowerCase();
  for (const n of names) {
    const f = `${n.toLowerCase()}:`;
    for (let at = head.indexOf(f); at !== -1; at = head.indexOf(f, at + 1))
      if (at === 0 || head.charCodeAt(at - 1) === 10) return true;
  }
  return false;
}

/** Whether the envelope sender is the null return path (`<>`), or unknown. */
function nullOrNoReturnPath(email: Email): boolean {
  const rp = firstHeader(email, 'return-path');
  if (rp === undefined) return true;
  return rp.replace(/[\s<>]/g, '') === '';
}

/** Whether an attachment of the message is a report file of one of `types` or `extensions`. */
function hasReportFile(
  email: Email,
  types: readonly string[],
  extensions: readonly string[],
): boolean {
  for (const a of (email.attachments ?? []).slice(0, 10)) {
    const ct = (a.content_type ?? '').toLowerCase();
    const name = (a.filename ?? '').toLowerCase();
    if (types.some((t) => ct.startsWith(t))) return true;
    if (extensions.some((e) => name.endsWith(e))) return true;
  }
  return false;
}

const DMARC_SUBJECT = /^\s*(?:\[[^\]]{0,80}\]\s*)?report\s+domain:\s*\S{1,253}\s+submitter:\s*\S/i;
const REPORT_ARCHIVES = ['application/zip', 'application/gzip', 'application/x-gzip'];

/** What machineReport reads of the message's links. */
interface LinkOf {
  url: string;
  scheme: string;
  domain: string;
  host: string;
  source: string;
}

/** Links elsewhere a report may have and still be judged one (a help page or two). */
const MAX_ELSEWHERE = 4;

/**
 * The machine report a message is by its structure, with its own links (outside the returned
 * message, which is an attachment) that go anywhere but the reporter's domain; undefined when the
 * structure is not one or it has more such links than a report's help pages.
 */
export function machineReport(
  email: Email,
  text: string,
  links: readonly LinkOf[],
  reporterOrg: string,
): MachineReport | undefined {
  const report = reportStructure(email, text);
  if (!report) return undefined;
  const elsewhere: LinkOf[] = [];
  for (const u of links) {
    if (u.scheme !== 'http' && u.scheme !== 'https') continue;
    if (u.source !== 'href' && u.source !== 'text' && u.source !== 'form' && u.source !== 'area')
      continue;
    if (reporterOrg && (u.domain || u.host) === reporterOrg) continue;
    if (u.source === 'form' || elsewhere.length === MAX_ELSEWHERE) return undefined;
    elsewhere.push(u);
  }
  return { ...report, elsewhere };
}

/** The parts of a report that the parser lists as attachments (RFC 3464, 6533, 8098). */
const REPORT_PARTS = new Set([
  'text/rfc822-headers',
  'message/rfc822',
  'message/global-headers',
  'message/delivery-status',
  'message/global-delivery-status',
  'message/disposition-notification',
]);

/**
 * The machine report a view is. A report speaks for its reporter: its links go to the reporter's
 * own domain, or to the help pages of the mail system that wrote it (a Microsoft 365 bounce links
 * its article on the status code at go.microsoft.com): a domain a brand operates for itself, not
 * a platform that sends for anyone, not a host anyone can publish on, no other address carried in
 * the link, and then the report carries nothing but its own parts (no file: a lure wrapped in a
 * report keeps its decoy links to a brand and its payload). A link anywhere else is a lure's, and
 * such a message is no report (it explains nothing).
 */
export function reportOf(
  v: { report: MachineReport | undefined; attachments: readonly { content_type: string }[] },
  lex: Lexicons,
): MachineReport | undefined {
  const r = v.report;
  if (!r || r.elsewhere.length === 0) return r;
  if (v.attachments.some((a) => !REPORT_PARTS.has(a.content_type.split(';')[0]!.trim())))
    return undefined;
  return r.elsewhere.every((u) => vendorPage(u, lex)) ? r : undefined;
}

function vendorPage(u: LinkOf, lex: Lexicons): boolean {
  if (!u.domain || hostInList(lex.freeHosting, u.host, u.domain) || carriesUrl(u.url)) return false;
  const brand = brandOwning(lex.brands, u.domain);
  return brand !== undefined && !brand.sends_for_anyone;
}

/** Whether a URL carries another URL after its host (an open redirect, a wrapper). */
function carriesUrl(url: string): boolean {
  const rest = url.slice(url.indexOf('//') + 2).toLowerCase();
  return (
    rest.includes('http:') ||
    rest.includes('https:') ||
    rest.includes('http%3a') ||
    rest.includes('https%3a')
  );
}

/** The lines of a report's machine-readable fields (`Name: value`), which are no one's prose. */
const FIELD_LINE = /^[A-Za-z][A-Za-z0-9-]{1,40}:[^\n]*$/;

/** `text` without the lines of a report's machine-readable fields, trimmed. */
export function reportProse(text: string): string {
  return text
    .slice(0, 100_000)
    .split('\n')
    .filter((l) => !FIELD_LINE.test(l.trim()))
    .join('\n')
    .trim();
}

function reportStructure(email: Email, text: string): Omit<MachineReport, 'elsewhere'> | undefined {
  const ct = firstHeader(email, 'content-type') ?? '';
  const reportType = /^\s*multipart\/report\b/i.test(ct) ? ctParam(ct, 'report-type') : '';
  if (reportType === 'delivery-status') {
    if (
      nullOrNoReturnPath(email) &&
      hasField(text, ['final-recipient', 'original-recipient']) &&
      hasField(text, ['action', 'status'])
    )
      return { kind: 'delivery_status', by: 'multipart/report, delivery-status, null sender' };
    return undefined;
  }
  if (reportType === 'disposition-notification') {
    if (hasField(text, ['disposition']))
      return { kind: 'disposition', by: 'multipart/report, disposition-notification' };
    return undefined;
  }
  if (reportType === 'tlsrpt' || firstHeader(email, 'tls-report-domain') !== undefined) {
    if (hasReportFile(email, ['application/tlsrpt'], ['.json.gz', '.json']))
      return { kind: 'tls_report', by: 'TLS report (RFC 8460) with its report file' };
    return undefined;
  }
  if (DMARC_SUBJECT.test(email.headers.subject.slice(0, 500))) {
    if (
      hasReportFile(
        email,
        [...REPORT_ARCHIVES, 'text/xml', 'application/xml'],
        ['.xml.gz', '.zip', '.xml'],
      )
    )
      return { kind: 'dmarc_report', by: 'DMARC aggregate report subject with its report file' };
  }
  return undefined;
}
