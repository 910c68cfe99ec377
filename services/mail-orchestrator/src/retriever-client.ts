import {
  type AckRequest,
  deriveCredential,
  FetchResponse,
  type RetrievedMessage,
  type VerdictRequest,
} from '@trawl/contracts';
import { RetrieverError } from './errors.ts';
import { failureText, httpCall, jsonOf } from './http.ts';

export interface RetrieverClientOptions {
  name: string;
  url: string;
  /**
   * The platform key: never sent. The retriever is sent its own credential derived from it
   * (`retriever:<name>`), which is what it checks.
   */
  internalApiKey?: string | undefined;
  timeoutMs: number;
  /**
   * Largest answer to a fetch (a batch of messages, base64); other answers are read up to 64 KiB.
   * Past it the answer is not read and the fetch fails like an unreachable retriever.
   */
  maxFetchBytes: number;
}

/** Largest answer to ack and verdict calls (a small JSON object). */
const MAX_SMALL_ANSWER_BYTES = 64 * 1024;

/** Speaks the retriever protocol (decisions.md "Mail retrievers") to one retriever. */
export class RetrieverClient {
  readonly name: string;
  /** Messages waiting at the source after the last fetch, when the retriever said (else undefined). */
  backlog: number | undefined;
  private readonly base: string;
  private readonly credential: string | undefined;
  constructor(private readonly o: RetrieverClientOptions) {
    this.name = o.name;
    this.base = o.url.replace(/\/+$/, '');
    this.credential = o.internalApiKey
      ? deriveCredential(o.internalApiKey, { kind: 'retriever', id: o.name })
      : undefined;
  }

  private async post(
    stage: 'fetch' | 'ack' | 'verdict',
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.credential) headers['x-internal-api-key'] = this.credential;
    let res: Awaited<ReturnType<typeof httpCall>>;
    try {
      res = await httpCall(`${this.base}${path}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        timeoutMs: this.o.timeoutMs,
        maxBytes: stage === 'fetch' ? this.o.maxFetchBytes : MAX_SMALL_ANSWER_BYTES,
        signal,
      });
    } catch (err) {
      throw new RetrieverError(this.name, stage, failureText(err));
    }
    if (res.status < 200 || res.status > 299) {
      throw new RetrieverError(this.name, stage, `answered ${res.status}`, res.status);
    }
    return jsonOf(res.text);
  }

  async fetch(maxMessages: number, signal?: AbortSignal): Promise<RetrievedMessage[]> {
    const body = await this.post('fetch', '/internal/fetch', { max_messages: maxMessages }, signal);
    const parsed = FetchResponse.safeParse(body);
    if (!parsed.success) {
      throw new RetrieverError(
        this.name,
        'fetch',
        'answered a body that is not {messages:[{id,raw}]}',
      );
    }
    this.backlog = parsed.data.backlog;
    return parsed.data.messages;
  }

  async ack(ids: string[], signal?: AbortSignal): Promise<void> {
    if (ids.length === 0) return;
    const req: AckRequest = { ids };
    await this.post('ack', '/internal/ack', req, signal);
  }

  async verdict(req: VerdictRequest, signal?: AbortSignal): Promise<void> {
    await this.post('verdict', '/internal/verdict', req, signal);
  }
}
