import { describeAnswer, errorText, fetchBounded, PeerAnswerError } from '@trawl/contracts';
import { z } from 'zod';
import {
  LlmBadAnswerError,
  LlmRejectedError,
  LlmTimeoutError,
  LlmUnavailableError,
} from './errors.ts';
import type { ChatMessage } from './prompt.ts';
import { chatUrl, type LlmApi, type LlmSettings } from './settings.ts';

/** Largest answer read (a chat completion of max_tokens is a few KiB); the rest is never read. */
const MAX_RESPONSE_BYTES = 1_000_000;

const OllamaResponse = z.object({
  message: z.object({ content: z.string() }),
  prompt_eval_count: z.number().optional(),
  eval_count: z.number().optional(),
});
const OpenAiResponse = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable() }) })).min(1),
  usage: z
    .object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() })
    .optional(),
});

export interface ChatOutcome {
  content: string;
  prompt_tokens?: number;
  completion_tokens?: number;
}

function requestBody(api: LlmApi, s: LlmSettings, messages: ChatMessage[]): object {
  if (api === 'ollama') {
    return {
      model: s.llm_model,
      messages,
      stream: false,
      format: 'json',
      options: { temperature: s.temperature, num_predict: s.max_tokens },
    };
  }
  return {
    model: s.llm_model,
    messages,
    max_tokens: s.max_tokens,
    temperature: s.temperature,
    response_format: { type: 'json_object' },
  };
}

/**
 * One chat completion against an Ollama- or OpenAI-compatible server, bounded by llm_timeout and by
 * the caller's signal. Errors: LlmTimeoutError, LlmUnavailableError (network, 5xx, 429),
 * LlmRejectedError (other 4xx), LlmBadAnswerError (unreadable answer). The caller's abort is
 * rethrown as its own reason.
 */
export async function chat(
  api: LlmApi,
  s: LlmSettings,
  messages: ChatMessage[],
  signal: AbortSignal,
  doFetch: typeof fetch = fetch,
): Promise<ChatOutcome> {
  const timeoutMs = Math.round(s.llm_timeout * 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
  };
  if (s.llm_api_key) headers.authorization = `Bearer ${s.llm_api_key}`;
  let res: Awaited<ReturnType<typeof fetchBounded>>;
  try {
    res = await fetchBounded(
      chatUrl(s.llm_host, api),
      {
        method: 'POST',
        headers,
        body: JSON.stringify(requestBody(api, s, messages)),
        redirect: 'error',
      },
      { maxBytes: MAX_RESPONSE_BYTES, timeoutMs, signal, fetch: doFetch },
    );
  } catch (e) {
    if (signal.aborted) throw signal.reason;
    if (e instanceof PeerAnswerError && e.kind === 'timeout')
      throw new LlmTimeoutError(s.llm_timeout);
    if (e instanceof PeerAnswerError) throw new LlmBadAnswerError('the answer is too large');
    throw new LlmUnavailableError(errorText(e), e);
  }
  const status = res.status;
  if (status >= 500 || status === 429) {
    throw new LlmUnavailableError(`HTTP ${status}`);
  }
  if (status >= 400) {
    // status, type and length; a short text only of a plain-text or JSON answer
    throw new LlmRejectedError(status, describeAnswer(res).slice(`HTTP ${status} `.length));
  }
  const text = res.body.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new LlmBadAnswerError('the server answer is not JSON');
  }
  if (api === 'ollama') {
    const r = OllamaResponse.safeParse(json);
    if (!r.success) throw new LlmBadAnswerError('the server answer has no message.content');
    return {
      content: r.data.message.content,
      ...(r.data.prompt_eval_count === undefined
        ? {}
        : { prompt_tokens: r.data.prompt_eval_count }),
      ...(r.data.eval_count === undefined ? {} : { completion_tokens: r.data.eval_count }),
    };
  }
  const r = OpenAiResponse.safeParse(json);
  if (!r.success)
    throw new LlmBadAnswerError('the server answer has no choices[0].message.content');
  const u = r.data.usage;
  return {
    content: r.data.choices[0]?.message.content ?? '',
    ...(u?.prompt_tokens === undefined ? {} : { prompt_tokens: u.prompt_tokens }),
    ...(u?.completion_tokens === undefined ? {} : { completion_tokens: u.completion_tokens }),
  };
}
