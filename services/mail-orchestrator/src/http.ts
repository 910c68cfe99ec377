import { fetchBounded } from '@trawl/contracts';

/** A JSON/bytes HTTP call with a timeout, a size bound and an outer abort signal (stop without grace). */
export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** Bytes read of an answer outside 2xx: enough for problem details, never a whole page. */
const ERROR_BODY_BYTES = 16 * 1024;

/**
 * One exchange with a peer (a retriever, the gateway): the whole answer within `timeoutMs` and
 * `maxBytes` (PeerAnswerError past either; the rest is never read), an answer outside 2xx read for
 * its first 16 KiB only.
 */
export async function httpCall(
  url: string,
  init: {
    method: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string | Buffer;
    timeoutMs: number;
    maxBytes: number;
    signal?: AbortSignal | undefined;
  },
): Promise<HttpAnswer> {
  const res = await fetchBounded(
    url,
    {
      method: init.method,
      ...(init.headers ? { headers: init.headers } : {}),
      ...(init.body !== undefined ? { body: init.body } : {}),
      redirect: 'error',
    },
    {
      maxBytes: init.maxBytes,
      timeoutMs: init.timeoutMs,
      errorBytes: ERROR_BODY_BYTES,
      signal: init.signal,
    },
  );
  return { status: res.status, headers: res.headers, text: res.body.toString('utf8') };
}

export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Describes a fetch failure without URLs or secrets. */
export function failureText(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: { code?: string } }).cause;
    if (err.name === 'TimeoutError' || (err as { kind?: string }).kind === 'timeout')
      return 'timed out';
    if (err.name === 'AbortError') return 'aborted';
    return cause?.code ? `${err.message} (${cause.code})` : err.message;
  }
  return String(err);
}
