import { decodeEntities } from './html-entities.ts';
import { type ZipEntry, zipDirectory, zipEntryBytes } from './zip-read.ts';

/**
 * The links of an Office document, read from its parts, never opened: in OOXML (docx, xlsx, pptx and
 * their macro twins) every relationship with `TargetMode="External"` (hyperlinks, and the remote
 * templates, OLE objects and frames that exploit documents fetch) and the `HYPERLINK` field codes
 * and formulas of the document, sheets and slides; in ODF (odt, ods, odp) the `xlink:href` of
 * `content.xml`; in RTF the `HYPERLINK` field codes. Parts are inflated one by one within the
 * limits below: a zip bomb gives nothing, a document with thousands of parts is read in part.
 */
export interface OfficeLinkLimits {
  /** Central-directory entries walked. */
  maxEntries: number;
  /** Parts inflated. */
  maxParts: number;
  /** Bytes one part may inflate to (a larger part is skipped). */
  maxPartBytes: number;
  /** Bytes all parts may inflate to together. */
  maxInflatedBytes: number;
  /** Bytes of an RTF document scanned. */
  maxRtfBytes: number;
  maxLinks: number;
}

export const OFFICE_LINK_LIMITS: OfficeLinkLimits = {
  maxEntries: 2000,
  maxParts: 200,
  maxPartBytes: 4 * 1024 * 1024,
  maxInflatedBytes: 16 * 1024 * 1024,
  maxRtfBytes: 8 * 1024 * 1024,
  maxLinks: 100,
};

/** Parts whose text holds field codes or links: document, headers, footers, notes, sheets, slides. */
const CONTENT_PART =
  /^(?:word\/(?:document|header\d*|footer\d*|footnotes|endnotes|comments)\.xml|xl\/worksheets\/sheet\d+\.xml|ppt\/slides\/slide\d+\.xml|content\.xml)$/;

const RELATIONSHIP = /<Relationship\b[^>]{0,4000}>/g;
const ATTRIBUTE = /\b(Target|TargetMode)\s*=\s*"([^"]{0,4000})"/g;
/** `HYPERLINK "url"` (a Word field code) and `HYPERLINK("url"` (a formula), quotes maybe escaped. */
const HYPERLINK_FIELD = /HYPERLINK[\s(]{1,10}(?:"|&quot;)([^"<&\\]{1,2048})/g;
const XLINK_HREF = /xlink:href\s*=\s*"([^"]{1,4000})"/g;

function externalTargets(xml: string, out: Set<string>, max: number): void {
  for (const m of xml.matchAll(RELATIONSHIP)) {
    if (out.size >= max) return;
    let target: string | undefined;
    let external = false;
    for (const a of m[0].matchAll(ATTRIBUTE)) {
      if (a[1] === 'Target') target = a[2];
      else external = a[2] === 'External';
    }
    if (external && target) out.add(decodeEntities(target));
  }
}

function fieldLinks(text: string, out: Set<string>, max: number): void {
  for (const m of text.matchAll(HYPERLINK_FIELD)) {
    if (out.size >= max) return;
    out.add((m[1] as string).trim());
  }
}

function odfLinks(xml: string, out: Set<string>, max: number): void {
  for (const m of xml.matchAll(XLINK_HREF)) {
    if (out.size >= max) return;
    const href = decodeEntities(m[1] as string);
    // links inside the document (#Sheet2, Pictures/…) are not URLs
    if (/^[a-z][a-z0-9+.-]{1,20}:/i.test(href)) out.add(href);
  }
}

function wantedPart(e: ZipEntry): 'rels' | 'content' | undefined {
  if (e.name.endsWith('.rels')) return 'rels';
  return CONTENT_PART.test(e.name) ? 'content' : undefined;
}

/** The link targets of an OOXML or ODF document (a zip), within `limits`. */
export function zipDocumentLinks(
  b: Buffer,
  limits: OfficeLinkLimits = OFFICE_LINK_LIMITS,
): string[] {
  const out = new Set<string>();
  let parts = 0;
  let inflated = 0;
  for (const e of zipDirectory(b, limits.maxEntries)) {
    if (out.size >= limits.maxLinks || parts >= limits.maxParts) break;
    if (inflated >= limits.maxInflatedBytes) break;
    const kind = wantedPart(e);
    if (kind === undefined) continue;
    parts++;
    const room = Math.min(limits.maxPartBytes, limits.maxInflatedBytes - inflated);
    const bytes = zipEntryBytes(b, e, room);
    // a part that could not be read, or larger than its room, spends its room
    inflated += bytes?.length ?? room;
    if (bytes === undefined) continue;
    const xml = bytes.toString('utf8');
    if (kind === 'rels') externalTargets(xml, out, limits.maxLinks);
    else if (e.name === 'content.xml') odfLinks(xml, out, limits.maxLinks);
    else fieldLinks(xml, out, limits.maxLinks);
  }
  return [...out];
}

/** The `HYPERLINK` field targets of an RTF document, within `limits`. */
export function rtfLinks(b: Buffer, limits: OfficeLinkLimits = OFFICE_LINK_LIMITS): string[] {
  const out = new Set<string>();
  fieldLinks(b.toString('latin1', 0, Math.min(b.length, limits.maxRtfBytes)), out, limits.maxLinks);
  return [...out];
}
