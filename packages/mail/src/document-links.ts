import type { DocumentLink, Email } from '@trawl/contracts';
import { CALENDAR_LINK_LIMITS, type CalendarLinkLimits, calendarLinks } from './calendar-links.ts';
import {
  type DocumentLinkSource,
  type ExtractedUrl,
  type FoundLinks,
  urlsOfFoundLinks,
} from './extract-urls.ts';
import {
  OFFICE_LINK_LIMITS,
  type OfficeLinkLimits,
  rtfLinks,
  zipDocumentLinks,
} from './office-links.ts';
import { PDF_LINK_LIMITS, type PdfLinkLimits, pdfLinks } from './pdf-links.ts';
import { imageFormatOf, QR_LIMITS, type QrLimits, qrText } from './qr-links.ts';

/**
 * The links inside a message's attachments (issue 32, "links wherever they are"): PDF URI actions,
 * Office external links and hyperlink fields, calendar invitations' URLs and texts, and QR codes in
 * images (attachments, and JPEG images inside PDFs). Each comes back as an ExtractedUrl like a link
 * of the body, with `source` (pdf, office, calendar, qr) and the attachment it was found in.
 *
 * It is CPU work on hostile input: the analyzers call it in the analysis pool's worker threads
 * (ADR 010), never on a thread that consumes the queue or answers HTTP; the job's evidence and the
 * threat-intel lookups read what the attachments analyzer reported (`document_urls`). Every
 * decoder is bounded (bytes scanned and inflated, parts, streams, pixels) and so is the message as
 * a whole (attachments looked at, images decoded, links kept).
 */
export interface DocumentLinkLimits {
  maxAttachments: number;
  /** Attachments larger than this (decoded bytes) are not read. */
  maxAttachmentBytes: number;
  /** Images decoded for a QR code per message (attachments and images in PDFs together). */
  maxImages: number;
  /**
   * Time the QR search may take per message: once spent, no further image is decoded (one image's
   * search is bounded by its pixels, QrLimits.scanPixels).
   */
  qrBudgetMs: number;
  /** Links kept per attachment, and per message. */
  maxLinksPerAttachment: number;
  maxLinks: number;
  pdf: PdfLinkLimits;
  office: OfficeLinkLimits;
  calendar: CalendarLinkLimits;
  qr: QrLimits;
}

/** The default bounds of reading links in attachments: sizes, counts, time. */
export const DOCUMENT_LINK_LIMITS: DocumentLinkLimits = {
  maxAttachments: 50,
  maxAttachmentBytes: 25 * 1024 * 1024,
  maxImages: 4,
  qrBudgetMs: 500,
  maxLinksPerAttachment: 100,
  maxLinks: 200,
  pdf: PDF_LINK_LIMITS,
  office: OFFICE_LINK_LIMITS,
  calendar: CALENDAR_LINK_LIMITS,
  qr: QR_LIMITS,
};

/** An attachment as the decoders read it. */
export interface AttachmentBytes {
  /** Its index in the Email's attachments (default: its index in the list given). */
  index?: number;
  filename: string;
  content_type: string;
  bytes: Buffer;
}

const CALENDAR_EXTENSIONS = /\.(?:ics|ifb|vcs|icalendar)$/i;

function isCalendar(a: AttachmentBytes): boolean {
  if (a.content_type.toLowerCase().startsWith('text/calendar')) return true;
  if (CALENDAR_EXTENSIONS.test(a.filename.trim())) return true;
  const head = a.bytes.toString('latin1', 0, Math.min(a.bytes.length, 64)).trimStart();
  return head
    .replace(/^\xef\xbb\xbf/, '')
    .toUpperCase()
    .startsWith('BEGIN:VCALENDAR');
}

/** A QR code's text: a link when it is one (http, https, ftp, www.), else text searched for URLs. */
function qrFound(text: string, into: FoundLinks): void {
  const t = text.trim();
  if (/^(?:https?|ftp):\/\/|^www\./i.test(t)) into.targets.push(t);
  else into.texts.push(t);
}

/** The message's image budget: images left, and when the time for them runs out. */
interface ImageBudget {
  left: number;
  until: number;
}

function qrOf(bytes: Buffer, budget: ImageBudget, limits: DocumentLinkLimits): FoundLinks {
  const found: FoundLinks = { targets: [], texts: [] };
  if (budget.left <= 0) return found;
  const now = performance.now();
  if (budget.until === 0) budget.until = now + limits.qrBudgetMs;
  else if (now >= budget.until) return found;
  budget.left--;
  const text = qrText(bytes, limits.qr);
  if (text !== undefined) qrFound(text, found);
  return found;
}

/** What one attachment holds, by the decoder its bytes call for. */
function linksOf(
  a: AttachmentBytes,
  budget: ImageBudget,
  limits: DocumentLinkLimits,
): { source: DocumentLinkSource; found: FoundLinks }[] {
  const b = a.bytes;
  const head = b.toString('latin1', 0, Math.min(b.length, 1024));
  if (head.includes('%PDF-')) {
    const pdf = pdfLinks(b, limits.pdf);
    const qr: FoundLinks = { targets: [], texts: [] };
    for (const jpeg of pdf.jpegs) {
      const one = qrOf(jpeg, budget, limits);
      qr.targets.push(...one.targets);
      qr.texts.push(...one.texts);
    }
    return [
      { source: 'pdf', found: { targets: pdf.uris, texts: [] } },
      { source: 'qr', found: qr },
    ];
  }
  if (head.startsWith('PK\x03\x04') || head.startsWith('PK\x05\x06')) {
    return [
      { source: 'office', found: { targets: zipDocumentLinks(b, limits.office), texts: [] } },
    ];
  }
  if (head.startsWith('{\\rtf')) {
    return [{ source: 'office', found: { targets: rtfLinks(b, limits.office), texts: [] } }];
  }
  if (imageFormatOf(b) !== undefined) return [{ source: 'qr', found: qrOf(b, budget, limits) }];
  if (isCalendar(a))
    return [{ source: 'calendar', found: calendarLinks(b.toString('utf8'), limits.calendar) }];
  return [];
}

/** The links inside `attachments`, in attachment order, within `limits` (see the module's note). */
export function documentLinks(
  attachments: readonly AttachmentBytes[],
  limits: DocumentLinkLimits = DOCUMENT_LINK_LIMITS,
): ExtractedUrl[] {
  const out: ExtractedUrl[] = [];
  const budget: ImageBudget = { left: limits.maxImages, until: 0 };
  const list = attachments.slice(0, limits.maxAttachments);
  for (let i = 0; i < list.length && out.length < limits.maxLinks; i++) {
    const a = list[i] as AttachmentBytes;
    if (a.bytes.length === 0 || a.bytes.length > limits.maxAttachmentBytes) continue;
    let found: ReturnType<typeof linksOf>;
    try {
      found = linksOf(a, budget, limits);
    } catch {
      // a decoder that throws on a malformed file gives nothing for it
      continue;
    }
    const room = Math.min(limits.maxLinksPerAttachment, limits.maxLinks - out.length);
    for (const { source, found: f } of found) {
      const urls = urlsOfFoundLinks(f, source, { index: a.index ?? i, name: a.filename }, room);
      out.push(...urls.slice(0, limits.maxLinks - out.length));
    }
  }
  return out;
}

/** Extractions already made, by message (the engine hands every analyzer the same headers object). */
const extracted = new WeakMap<object, { attachments: unknown; urls: ExtractedUrl[] }>();

/**
 * The links inside an Email's attachments (documentLinks over their decoded content), once per
 * message and thread: the analyzers of a stage share one extraction, as they share extractUrls'.
 */
export function documentUrls(email: Pick<Email, 'attachments' | 'headers'>): ExtractedUrl[] {
  const key: object = email.headers;
  const hit = extracted.get(key);
  if (hit && hit.attachments === email.attachments) return hit.urls.slice();
  const list: AttachmentBytes[] = [];
  const all = (email.attachments ?? []).slice(0, DOCUMENT_LINK_LIMITS.maxAttachments);
  for (let index = 0; index < all.length; index++) {
    const a = all[index] as NonNullable<Email['attachments']>[number];
    if (a.content === undefined) continue;
    // decoded size from the base64 length, before decoding
    if ((a.content.length * 3) / 4 > DOCUMENT_LINK_LIMITS.maxAttachmentBytes) continue;
    list.push({
      index,
      filename: a.filename,
      content_type: a.content_type ?? '',
      bytes: Buffer.from(a.content, 'base64'),
    });
  }
  const urls = list.length > 0 ? documentLinks(list) : [];
  extracted.set(key, { attachments: email.attachments, urls });
  return urls.slice();
}

/**
 * Document links as reported (DocumentLink: the attachments analyzer's `document_urls`) back to
 * ExtractedUrls, parsed as the body's links are: what the job's evidence and the threat-intel
 * lookups read, with nothing decoded again. At most `max`.
 */
export function urlsOfDocumentLinks(links: readonly DocumentLink[], max: number): ExtractedUrl[] {
  const out: ExtractedUrl[] = [];
  for (const l of links) {
    if (out.length >= max) break;
    const at = { index: l.attachment, name: l.attachment_name };
    out.push(...urlsOfFoundLinks({ targets: [l.url], texts: [] }, l.source, at, 1));
  }
  return out;
}
