/** A JSON/bytes HTTP call with a timeout and an outer abort signal (stop without grace). */
export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export async function httpCall(
  url: string,
  init: {
    method: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string | Buffer;
    timeoutMs: number;
    signal?: AbortSignal | undefined;
  },
): Promise<HttpAnswer> {
  const signals = [AbortSignal.timeout(init.timeoutMs)];
  if (init.signal) signals.push(init.signal);
  const res = await fetch(url, {
    method: init.method,
    ...(init.headers ? { headers: init.headers } : {}),
    ...(init.body !== undefined ? { body: init.body } : {}),
    signal: AbortSignal.any(signals),
    redirect: 'error',
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
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
    if (err.name === 'TimeoutError') return 'timed out';
    if (err.name === 'AbortError') return 'aborted';
    return cause?.code ? `${err.message} (${cause.code})` : err.message;
  }
  return String(err);
}
