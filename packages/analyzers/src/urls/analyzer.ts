import type { AnalyzerAnswerInput, Email } from '@trawl/contracts';
import { type Lexicons, loadLexicons } from '../shared/lexicons.ts';
import { answerFrom, type Finding } from '../shared/score.ts';
import { documentUrlViews, type UrlView, viewOf } from '../shared/view.ts';
import type { UrlsSettings } from './settings.ts';
import { URLS_SYMBOLS } from './symbols.ts';
import {
  brandInPathFindings,
  brandInSubdomainFindings,
  encodedHostFindings,
  formFindings,
  freeHostingFindings,
  hiddenLinksFindings,
  homographFindings,
  ipUrlFindings,
  linkKind,
  linkTextFindings,
  lookalikeFindings,
  type MessageUrlTechnique,
  randomDomainFindings,
  recipientInUrlFindings,
  riskyTldFindings,
  scriptUrlFindings,
  shortenerFindings,
  statusBarFindings,
  type UrlTechnique,
  urlContext,
  userinfoFindings,
} from './techniques.ts';

/** The per-link techniques in the order their findings are reported for each link. */
const URL_TECHNIQUES: readonly UrlTechnique[] = [
  scriptUrlFindings,
  formFindings,
  ipUrlFindings,
  // http(s) links to a host name
  userinfoFindings,
  encodedHostFindings,
  homographFindings,
  lookalikeFindings,
  brandInSubdomainFindings,
  randomDomainFindings,
  shortenerFindings,
  riskyTldFindings,
  freeHostingFindings,
  linkTextFindings,
  recipientInUrlFindings,
  brandInPathFindings,
];

/** The techniques that look at the message once all its links were seen, in order. */
const MESSAGE_URL_TECHNIQUES: readonly MessageUrlTechnique[] = [
  hiddenLinksFindings,
  statusBarFindings,
];

const DOCUMENT_KIND: Record<string, string> = {
  pdf: 'PDF',
  office: 'document',
  calendar: 'calendar invitation',
  qr: 'QR code',
};

/** Where a link inside an attachment was found, for its findings' text: `in QR code (scan.png)`. */
function whereFound(u: UrlView): string {
  return `in ${DOCUMENT_KIND[u.source] ?? u.source} (${(u.attachment_name ?? '').slice(0, 120)})`;
}

/**
 * Pure URL checks; never fetches anything. Link by link, every technique of URL_TECHNIQUES that
 * applies to the link's kind, in order; then MESSAGE_URL_TECHNIQUES. The links inside attachments
 * (PDF, Office, calendar, QR codes) go through the same per-link techniques after the body's, each
 * finding saying where the link was found.
 */
function urlFindings(email: Email, s: UrlsSettings, lex: Lexicons, docs: UrlView[]): Finding[] {
  const ctx = urlContext(email, s, lex);
  const out: Finding[] = [];
  for (const u of ctx.v.urls) {
    const kind = linkKind(u);
    if (u.hidden && (kind === 'ip' || kind === 'host')) ctx.hidden++;
    for (const t of URL_TECHNIQUES) if (t.kinds.includes(kind)) out.push(...t.find(ctx, u));
  }
  for (const t of MESSAGE_URL_TECHNIQUES) out.push(...t(ctx));
  for (const u of docs) {
    const kind = linkKind(u);
    for (const t of URL_TECHNIQUES) {
      if (!t.kinds.includes(kind)) continue;
      for (const f of t.find(ctx, u)) out.push({ ...f, value: `${f.value} ${whereFound(u)}` });
    }
  }
  return out;
}

export function analyzeUrls(email: Email, settings: UrlsSettings): AnalyzerAnswerInput {
  const lex = loadLexicons(settings.lexicon_dir);
  const v = viewOf(email);
  const docs = documentUrlViews(email);
  const findings = urlFindings(email, settings, lex, docs);
  const domains = new Set([...v.urls, ...docs].map((u) => u.domain).filter(Boolean));
  return answerFrom(findings, {
    base: settings.base_probability,
    threshold: settings.phishing_score_threshold,
    name: 'urls',
    details: {
      url_count: v.urls.length,
      document_url_count: docs.length,
      domains: [...domains].slice(0, 50),
    },
    maxLogOdds: 8,
    groups: URLS_SYMBOLS,
  });
}
