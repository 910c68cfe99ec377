import type { AnalyzerAnswerInput, Email } from '@trawl/contracts';
import { answerFrom, type Finding } from '../shared/score.ts';
import type { IntelAnalyzerSettings } from './analyzer-settings.ts';
import { type IntelMatch, ThreatIntelData } from './data.ts';
import { INTEL_SYMBOLS, type IntelSymbol } from './symbols.ts';

const PROVIDER_ID = 'threat-intel';

/** The threat-intel provider's data in analysis_context (the latest stage that has it). */
function gatherIntel(email: Email): { data?: ThreatIntelData; problem?: string } {
  let out: { data?: ThreatIntelData; problem?: string } = {};
  for (const [stage, value] of Object.entries(email.analysis_context ?? {})) {
    const providers = (value as { providers?: Record<string, unknown> } | null)?.providers;
    const raw = providers && typeof providers === 'object' ? providers[PROVIDER_ID] : undefined;
    if (raw === undefined) continue;
    const r = ThreatIntelData.safeParse(raw);
    out = r.success
      ? { data: r.data }
      : { problem: `${stage}.providers.${PROVIDER_ID} is malformed` };
  }
  return out;
}

const SYMBOL: Record<IntelMatch['kind'], IntelSymbol> = {
  url: 'url_listed',
  host: 'host_listed',
  ip: 'host_listed',
  domain: 'domain_listed',
  attachment: 'attachment_listed',
};

const TYPE: Record<IntelMatch['kind'], string> = {
  url: 'threat_intel_url',
  host: 'threat_intel_host',
  ip: 'threat_intel_host',
  domain: 'threat_intel_domain',
  attachment: 'threat_intel_attachment',
};

function describe(m: IntelMatch): string {
  const by = `listed by ${m.feeds.join(', ')}`;
  switch (m.kind) {
    case 'url':
      return `link ${m.value} ${by}`;
    case 'domain':
      return `link domain ${m.value}${m.host && m.host !== m.value ? ` (host ${m.host})` : ''} ${by}`;
    case 'host':
      return `link host ${m.value}${m.host && m.host !== m.value ? ` (of ${m.host})` : ''} ${by}`;
    case 'ip':
      return `link to IP address ${m.value} ${by}`;
    case 'attachment':
      return `attachment ${m.attachment ?? ''} (${m.hash_type ?? 'hash'} ${m.value}) ${by}`;
  }
}

/**
 * Turns the threat-intel provider's matches into indicators (each naming the listed item and the
 * feeds that list it) and symbols with their declared scores. Without the provider's data, or
 * while no feed is loaded yet, it abstains: no symbol, `available: false`.
 */
export function analyzeIntel(email: Email, s: IntelAnalyzerSettings): AnalyzerAnswerInput {
  const { data, problem } = gatherIntel(email);
  const findings: Finding[] = [];
  for (const m of data?.available ? data.matches : []) {
    const symbol = SYMBOL[m.kind];
    findings.push({ type: TYPE[m.kind], value: describe(m), weight: s.weights[symbol], symbol });
  }
  const available = data?.available ?? false;
  const answer = answerFrom(findings, {
    base: s.base_probability,
    threshold: s.phishing_score_threshold,
    name: 'intel',
    groups: INTEL_SYMBOLS,
    details: {
      available,
      ...(data
        ? {
            checked: data.checked,
            feeds: data.feeds.map((f) => ({
              name: f.name,
              loaded: f.loaded,
              entries: f.entries,
              ...(f.error ? { error: f.error.code } : {}),
            })),
            matches: data.matches,
          }
        : {}),
      ...(problem ? { problems: [problem] } : {}),
    },
  });
  if (!available)
    answer.summary = data
      ? 'intel: no threat-intelligence feed is loaded yet'
      : 'intel: no threat-intel provider data';
  return answer;
}
