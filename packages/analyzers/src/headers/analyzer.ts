import type { AnalyzerAnswerInput, Email } from '@trawl/contracts';
import { type Lexicons, loadLexicons } from '../shared/lexicons.ts';
import { answerFrom, type Finding } from '../shared/score.ts';
import { viewOf } from '../shared/view.ts';
import { headerContext } from './context.ts';
import type { HeadersSettings } from './settings.ts';
import { HEADERS_SYMBOLS } from './symbols.ts';
import {
  addressInSubjectFindings,
  authFailureFindings,
  brokenWordsFindings,
  dateFindings,
  disguisedBrandFindings,
  displayNameAddressFindings,
  displayNameBrandFindings,
  displayNameInstitutionFindings,
  displayNameRecipientFindings,
  fakeReplyFindings,
  fromAddressFindings,
  generatedLocalPartFindings,
  generatedSubdomainFindings,
  type HeaderTechnique,
  junkSuffixFindings,
  listResignedFindings,
  malformedDisplayNameFindings,
  messageIdFindings,
  organisationNameFindings,
  ownDomainUnauthenticatedFindings,
  recipientDomainInSubjectFindings,
  recipientInSubjectFindings,
  replyToFindings,
  returnPathFindings,
  selfAddressedFindings,
  senderLookalikeFindings,
  senderPunycodeFindings,
  standingFindings,
  systemNameFindings,
  throwawayDomainFindings,
  unrelatedOrgNameFindings,
} from './techniques.ts';

/** The header techniques in the order their findings are reported. */
const HEADER_TECHNIQUES: readonly HeaderTechnique[] = [
  // sender authentication
  authFailureFindings,
  listResignedFindings,
  ownDomainUnauthenticatedFindings,
  standingFindings,
  // where replies and bounces go
  replyToFindings,
  returnPathFindings,
  // who the From header claims to be
  displayNameAddressFindings,
  displayNameBrandFindings,
  displayNameInstitutionFindings,
  organisationNameFindings,
  fromAddressFindings,
  displayNameRecipientFindings,
  systemNameFindings,
  // the sender's domain
  senderLookalikeFindings,
  senderPunycodeFindings,
  throwawayDomainFindings,
  // the recipient used as bait
  selfAddressedFindings,
  recipientInSubjectFindings,
  recipientDomainInSubjectFindings,
  // malformed headers
  messageIdFindings,
  dateFindings,
  // bulk-mail tricks in From and Subject
  junkSuffixFindings,
  malformedDisplayNameFindings,
  brokenWordsFindings,
  disguisedBrandFindings,
  fakeReplyFindings,
  unrelatedOrgNameFindings,
  addressInSubjectFindings,
  generatedSubdomainFindings,
  generatedLocalPartFindings,
];

/** Pure header checks of one message: every technique of HEADER_TECHNIQUES, in order. */
function headerFindings(email: Email, settings: HeadersSettings, lex: Lexicons): Finding[] {
  const out: Finding[] = [];
  const ctx = headerContext(email, settings, lex, out);
  for (const technique of HEADER_TECHNIQUES) out.push(...technique(ctx));
  return out;
}

export function analyzeHeaders(email: Email, settings: HeadersSettings): AnalyzerAnswerInput {
  const lex = loadLexicons(settings.lexicon_dir);
  const findings = headerFindings(email, settings, lex);
  return answerFrom(findings, {
    base: settings.base_probability,
    threshold: settings.phishing_score_threshold,
    name: 'headers',
    details: { auth: viewOf(email).auth },
    maxLogOdds: 8,
    groups: HEADERS_SYMBOLS,
  });
}
