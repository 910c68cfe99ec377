import { z } from 'zod';

export const LlmSettings = z.object({
  /** `ollama` (POST /api/chat), `openai` (POST /v1/chat/completions) or `auto` (from llm_host). */
  llm_api: z.enum(['auto', 'ollama', 'openai']).default('auto'),
  /** Base URL of the LLM server; empty turns the analyzer off. */
  llm_host: z
    .string()
    .default('')
    .refine((v) => v === '' || /^https?:\/\/[^\s]+$/.test(v), {
      message: 'must be an http(s) URL',
    }),
  /** Model name; must be set together with llm_host. */
  llm_model: z.string().default(''),
  /** Seconds per call. */
  llm_timeout: z.number().positive().max(600).default(60),
  max_tokens: z.number().int().positive().max(32_768).default(512),
  temperature: z.number().min(0).max(2).default(0.1),
  /** Sent as `Authorization: Bearer …` when set (OpenAI-compatible servers). */
  llm_api_key: z.string().default(''),
  /** Characters of body text sent to the model. */
  max_body_chars: z.number().int().positive().max(200_000).default(6000),
  /** URLs listed to the model. */
  max_urls: z.number().int().nonnegative().max(500).default(30),
  /** Indicator confidence floor: reasons below it are still reported in analyzer_details. */
  confidence_threshold: z.number().min(0).max(1).default(0),
});
export type LlmSettings = z.output<typeof LlmSettings>;

export type LlmApi = 'ollama' | 'openai';

/** Resolves `auto`: a host ending in /v1 (or containing /v1/) speaks OpenAI, anything else Ollama. */
export function resolveApi(s: Pick<LlmSettings, 'llm_api' | 'llm_host'>): LlmApi {
  if (s.llm_api !== 'auto') return s.llm_api;
  return /\/v1(\/|$)/.test(new URL(s.llm_host).pathname) ? 'openai' : 'ollama';
}

/** The chat endpoint for the API. */
export function chatUrl(host: string, api: LlmApi): string {
  const base = host.replace(/\/+$/, '');
  if (api === 'ollama') return `${base}/api/chat`;
  if (/\/chat\/completions$/.test(base)) return base;
  return /\/v1$/.test(base) ? `${base}/chat/completions` : `${base}/v1/chat/completions`;
}
