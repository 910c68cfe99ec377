import type { AnalyzerAnswerInput, Email, Indicator } from '@trawl/contracts';
import { defineAnalyzer } from '@trawl/plugin-sdk';
import { parseVerdict } from './answer.ts';
import { chat } from './client.ts';
import { LlmNotConfiguredError } from './errors.ts';
import { buildMessages } from './prompt.ts';
import { LlmSettings, resolveApi } from './settings.ts';

/** Runs one LLM assessment of `email`. Never fetches the email's URLs. */
async function analyzeWithLlm(
  email: Email,
  s: LlmSettings,
  signal: AbortSignal,
  doFetch: typeof fetch = fetch,
): Promise<AnalyzerAnswerInput> {
  if (s.llm_host.trim() === '') throw new LlmNotConfiguredError('llm_host');
  if (s.llm_model.trim() === '') throw new LlmNotConfiguredError('llm_model');
  const api = resolveApi(s);
  const messages = buildMessages(email, s);
  const started = performance.now();
  const out = await chat(api, s, messages, signal, doFetch);
  const v = parseVerdict(out.content);
  const indicators: Indicator[] = [];
  if (v.is_phishing && v.confidence >= s.confidence_threshold) {
    for (const reason of v.reasons.slice(0, 8)) {
      indicators.push({
        type: 'llm_assessment',
        value: reason.slice(0, 500),
        confidence: v.confidence,
      });
    }
    for (const i of v.indicators ?? []) indicators.push(i);
  }
  const summary =
    v.summary ??
    `LLM (${s.llm_model}): ${v.is_phishing ? 'phishing' : 'not phishing'}${v.reasons.length ? ` — ${v.reasons.slice(0, 3).join('; ')}` : ''}`;
  return {
    is_phishing: v.is_phishing,
    confidence: v.confidence,
    ...(v.threat_level === undefined ? {} : { threat_level: v.threat_level }),
    summary: summary.slice(0, 2000),
    indicators,
    analyzer_details: {
      api,
      model: s.llm_model,
      reasons: v.reasons,
      duration_ms: Math.round(performance.now() - started),
      ...(out.prompt_tokens === undefined ? {} : { prompt_tokens: out.prompt_tokens }),
      ...(out.completion_tokens === undefined ? {} : { completion_tokens: out.completion_tokens }),
    },
  };
}

export const llmAnalyzer = defineAnalyzer({
  id: 'llm',
  version: '1.0.0',
  description:
    'Asks an Ollama- or OpenAI-compatible LLM for a verdict; the email is passed as untrusted data. Off until llm_host is set.',
  settings: LlmSettings,
  analyze: (email, { settings, signal }) => analyzeWithLlm(email, settings, signal),
});
