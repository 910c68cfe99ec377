import type { AnalyzerAnswerInput, Email, Indicator } from '@trawl/contracts';
import { gatherContext } from './gather.ts';
import { requestLanguage } from './keywords.ts';
import { findInternalLookalike } from './lookalike.ts';
import type { ContextSettings } from './settings.ts';

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

function inDomains(domain: string, domains: readonly string[]): boolean {
  return domains.some((d) => domain === d || domain.endsWith(`.${d}`));
}

/**
 * Turns the data of the directory and sender-history providers into indicators:
 * `vip_impersonation`, `first_time_sender` (with payment or credential language),
 * `internal_domain_lookalike` and `known_phishing_sender`.
 */
export function analyzeContext(email: Email, s: ContextSettings): AnalyzerAnswerInput {
  const ctx = gatherContext(email);
  const dir = ctx.directory;
  const hist = ctx.history?.available ? ctx.history : undefined;
  const sender = email.headers.sender.toLowerCase();
  const senderDomain = domainOf(sender);
  const internalDomains = [...new Set([...(dir?.internal_domains ?? []), ...s.internal_domains])];
  const partnerDomains = dir?.partner_domains ?? [];
  const senderInternal = dir?.sender_internal || inDomains(senderDomain, internalDomains);
  const senderPartner = dir?.sender_partner || inDomains(senderDomain, partnerDomains);
  const indicators: Indicator[] = [];

  // 1. an external sender using the display name of someone in the directory
  const m = dir?.display_name_matches_person;
  if (m?.matched && !m.same_address && !senderInternal) {
    const who = `${m.name ?? m.display_name}${m.title ? ` (${m.title})` : ''}`;
    indicators.push({
      type: 'vip_impersonation',
      value: `external sender ${sender} uses the name of ${m.vip ? 'VIP ' : ''}${who}`,
      confidence: Math.max(
        0,
        (m.vip ? s.vip_confidence : s.person_confidence) - (senderPartner ? 0.2 : 0),
      ),
    });
  }

  // 2. a first-time sender asking for payment or credentials
  let language: { payment: string[]; credential: string[] } | undefined;
  if (hist?.first_time_sender && !senderInternal) {
    language = requestLanguage(email.headers.subject, email.body_text, email.body_html);
    const asks = [
      ...(language.payment.length ? [`payment (${language.payment.slice(0, 3).join(', ')})`] : []),
      ...(language.credential.length
        ? [`credentials (${language.credential.slice(0, 3).join(', ')})`]
        : []),
    ];
    if (asks.length > 0) {
      const c = s.first_time_sender_confidence + (hist.first_time_domain ? 0.1 : 0);
      indicators.push({
        type: 'first_time_sender',
        value: `first message from ${sender}${hist.first_time_domain ? ` (and from ${senderDomain})` : ''}; asks for ${asks.join(' and ')}`,
        confidence: Math.min(1, c),
      });
    }
  }

  // 3. a sender domain imitating an internal domain
  if (!senderInternal && !senderPartner && internalDomains.length > 0) {
    const l = findInternalLookalike(senderDomain, internalDomains);
    if (l) {
      indicators.push({
        type: 'internal_domain_lookalike',
        value: `sender domain ${senderDomain} imitates ${l.internal_domain} (${l.how.replace('_', ' ')})`,
        confidence: l.confidence,
      });
    }
  }

  // 4. past phishing verdicts for this sender or domain
  if (hist && !senderInternal) {
    if (hist.sender.phishing_count > 0) {
      indicators.push({
        type: 'known_phishing_sender',
        value: `${sender} sent ${hist.sender.phishing_count} message(s) judged phishing before`,
        confidence: Math.min(0.95, 0.6 + 0.1 * hist.sender.phishing_count),
      });
    } else if (
      hist.domain_history.phishing_count >= 2 &&
      hist.domain_history.phishing_count * 2 >= hist.domain_history.message_count
    ) {
      indicators.push({
        type: 'known_phishing_sender',
        value: `${senderDomain} sent mostly phishing before (${hist.domain_history.phishing_count} of ${hist.domain_history.message_count})`,
        confidence: 0.6,
      });
    }
  }

  const hasData = dir !== undefined || hist !== undefined || s.internal_domains.length > 0;
  let p: number;
  if (indicators.length > 0) {
    p = 1 - indicators.reduce((acc, i) => acc * (1 - i.confidence), 1);
  } else if (!hasData) {
    p = 0.5; // nothing to judge from
  } else if (
    hist &&
    hist.sender.message_count >= s.established_after_messages &&
    hist.sender.phishing_count === 0
  ) {
    p = 0.1;
  } else {
    p = 0.25;
  }
  const isPhishing = p >= 0.5 && indicators.length > 0;
  return {
    is_phishing: isPhishing,
    confidence: Number((isPhishing ? p : 1 - p).toFixed(4)),
    summary:
      indicators.length > 0
        ? indicators.map((i) => i.value).join('; ')
        : hasData
          ? 'no contextual warning signs'
          : 'no context provider data available',
    indicators,
    analyzer_details: {
      context_available: hasData,
      directory: dir !== undefined,
      sender_history: hist !== undefined,
      sender_internal: senderInternal,
      sender_partner: senderPartner,
      ...(dir?.recipient_vips.length
        ? { recipient_vips: dir.recipient_vips.map((v) => v.email) }
        : {}),
      ...(language ? { request_language: language } : {}),
      ...(ctx.problems.length ? { problems: ctx.problems } : {}),
    },
  };
}
