import { backoffDelay } from '@trawl/contracts';
import { readApiAnswer, retryAfterMs } from './bounded.ts';
import { ApiThrottledError, ApiUnavailableError, OAuthError } from './errors.ts';
import type { TokenSource } from './token-source.ts';

/** One request to a mailbox API: method, URL, headers, JSON body, bound. */
export interface ApiRequest {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Absolute URL (a Graph nextLink is one) or a path joined to the client's base URL. */
  url: string;
  headers?: Record<string, string>;
  json?: unknown;
  /** Bound of this answer (default: the client's). */
  maxBytes?: number;
  /** What the request does, for errors and logs (never carries a token). */
  what: string;
}

/** A mailbox API's answer, read within its bounds. */
export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: Buffer;
  /** The body as JSON (undefined when it is not). */
  json(): unknown;
}

export interface ApiClientOptions {
  baseUrl: string;
  /** Access tokens for the requests (one per client: a Gmail mailbox has its own subject). */
  tokens: TokenSource;
  fetch?: typeof fetch;
  /** Bound of one attempt, answer included (default 30 s). */
  timeoutMs?: number;
  /** Default bound of an answer (default 1 MiB). */
  maxBytes?: number;
  /** Requests in flight at once (Outlook allows 4 per mailbox and app; default 4). */
  concurrency?: number;
  /** Attempts of one request through throttling and network errors (default 5). */
  maxAttempts?: number;
  /** First backoff without a Retry-After (default 500 ms, doubled, with jitter). */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** A Retry-After longer than this is not waited for in the request: it fails with it (default 30 s). */
  maxWaitMs?: number;
  /** Extra throttling answers (Gmail: 403 rateLimitExceeded / userRateLimitExceeded). */
  isThrottled?: (status: number, body: unknown) => boolean;
  sleep?: (ms: number) => Promise<void>;
  /** Told of every throttled answer and every retry (metrics). */
  onThrottled?: (waitMs: number) => void;
}

/** A FIFO semaphore. */
function semaphore(n: number) {
  let free = n;
  const waiting: (() => void)[] = [];
  return {
    async acquire(): Promise<void> {
      if (free > 0) {
        free -= 1;
        return;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    release(): void {
      const next = waiting.shift();
      if (next) next();
      else free += 1;
    },
  };
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * An HTTP client of one OAuth-protected API (Microsoft Graph for one mailbox, the Gmail API for one
 * user): a bearer token on every request (a 401 drops it and retries once with a new one), at most
 * `concurrency` requests at once, 429 and 503/504 (and `isThrottled` answers) retried after their
 * Retry-After or with exponential backoff, every answer read within a size and time bound. Any other
 * answer is handed back as it is, for the caller to read.
 */
export function createApiClient(o: ApiClientOptions) {
  const doFetch = o.fetch ?? fetch;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const timeoutMs = o.timeoutMs ?? 30_000;
  const maxAttempts = o.maxAttempts ?? 5;
  const maxWaitMs = o.maxWaitMs ?? 30_000;
  const sem = semaphore(o.concurrency ?? 4);
  const base = o.baseUrl.replace(/\/+$/, '');

  async function once(req: ApiRequest): Promise<ApiAnswer> {
    const token = await o.tokens.token();
    const url = /^https?:\/\//.test(req.url) ? req.url : `${base}/${req.url.replace(/^\/+/, '')}`;
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      ...req.headers,
    };
    if (req.json !== undefined) headers['content-type'] = 'application/json';
    const res = await doFetch(url, {
      method: req.method ?? 'GET',
      headers,
      ...(req.json !== undefined ? { body: JSON.stringify(req.json) } : {}),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
    const body = await readApiAnswer(res, req.maxBytes ?? o.maxBytes ?? 1024 * 1024, req.what);
    return { status: res.status, headers: res.headers, body, json: () => parseJson(body) };
  }

  async function request(req: ApiRequest): Promise<ApiAnswer> {
    await sem.acquire();
    try {
      let reauthorised = false;
      for (let attempt = 1; ; attempt++) {
        let answer: ApiAnswer;
        try {
          answer = await once(req);
        } catch (err) {
          if (err instanceof OAuthError) throw err;
          if ((err as { code?: string }).code === 'TRAWL_ERR_OAUTH_API_ANSWER_TOO_LARGE') throw err;
          if (attempt >= maxAttempts) throw new ApiUnavailableError(req.what, err);
          await sleep(
            backoffDelay(attempt, {
              initialMs: o.backoffInitialMs ?? 500,
              maxMs: o.backoffMaxMs ?? 30_000,
              jitter: 0.5,
            }),
          );
          continue;
        }
        if (answer.status === 401 && !reauthorised) {
          reauthorised = true;
          o.tokens.invalidate();
          continue;
        }
        const throttled =
          answer.status === 429 ||
          answer.status === 503 ||
          answer.status === 504 ||
          (o.isThrottled?.(answer.status, answer.json()) ?? false);
        if (!throttled) return answer;
        const wait =
          retryAfterMs(answer.headers.get('retry-after')) ??
          backoffDelay(attempt, {
            initialMs: o.backoffInitialMs ?? 500,
            maxMs: o.backoffMaxMs ?? 30_000,
            jitter: 0.5,
          });
        o.onThrottled?.(wait);
        if (attempt >= maxAttempts || wait > maxWaitMs)
          throw new ApiThrottledError(req.what, Math.max(1, Math.ceil(wait / 1000)));
        await sleep(wait);
      }
    } finally {
      sem.release();
    }
  }

  return { request, baseUrl: base };
}
/** A client of a mailbox API with OAuth tokens, retries and bounded answers. */
export type ApiClient = ReturnType<typeof createApiClient>;
