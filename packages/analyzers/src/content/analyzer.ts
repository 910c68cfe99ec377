import type { AnalyzerAnswerInput, Email } from '@trawl/contracts';
import { type Lexicons, loadLexicons } from '../shared/lexicons.ts';
import { answerFrom, type Finding } from '../shared/score.ts';
import type { ContentSettings } from './settings.ts';
import { CONTENT_SYMBOLS } from './symbols.ts';
import {
  brandFindings,
  brandOwnLinksFindings,
  type ContentTechnique,
  callbackFindings,
  comboFindings,
  contentContext,
  foreignNewsletterFindings,
  greetingFindings,
  hiddenOffsiteFindings,
  hiddenTextFindings,
  htmlOnlyFindings,
  imageOnlyFindings,
  insertedNoiseFindings,
  institutionOffsiteFindings,
  languageFindings,
  machineReportFindings,
  obfuscationFindings,
  sentimentFindings,
  subjectMoneyFindings,
} from './techniques.ts';

export { insertedNoise, visibleBelow } from './signals.ts';

/** The content techniques in the order their findings are reported. */
const CONTENT_TECHNIQUES: readonly ContentTechnique[] = [
  // standard machine mail, recognised by its structure
  machineReportFindings,
  // pressure language
  languageFindings,
  comboFindings,
  sentimentFindings,
  // brands named versus the sender
  brandFindings,
  institutionOffsiteFindings,
  // text disguised against keyword filters
  obfuscationFindings,
  insertedNoiseFindings,
  hiddenTextFindings,
  // lures
  subjectMoneyFindings,
  callbackFindings,
  htmlOnlyFindings,
  imageOnlyFindings,
  hiddenOffsiteFindings,
  foreignNewsletterFindings,
  // how the recipient is addressed
  greetingFindings,
  // a brand's own mail, every link to the brand
  brandOwnLinksFindings,
];

/** Pure content checks of one message: every technique of CONTENT_TECHNIQUES, in order. */
function contentFindings(
  email: Email,
  s: ContentSettings,
  lex: Lexicons,
): { findings: Finding[]; details: Record<string, unknown> } {
  const ctx = contentContext(email, s, lex);
  const findings: Finding[] = [];
  for (const technique of CONTENT_TECHNIQUES) findings.push(...technique(ctx));
  return {
    findings,
    details: {
      language: ctx.v.language || 'unknown',
      sentiment: Math.round(ctx.sentiment * 100) / 100,
      hits: { subject: ctx.hits.subject, body: ctx.hits.body },
    },
  };
}

export function analyzeContent(email: Email, settings: ContentSettings): AnalyzerAnswerInput {
  const lex = loadLexicons(settings.lexicon_dir);
  const { findings, details } = contentFindings(email, settings, lex);
  return answerFrom(findings, {
    base: settings.base_probability,
    threshold: settings.phishing_score_threshold,
    name: 'content',
    details,
    maxLogOdds: 7,
    groups: CONTENT_SYMBOLS,
  });
}
