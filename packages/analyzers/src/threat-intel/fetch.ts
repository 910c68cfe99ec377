import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { fetchBounded, PeerAnswerError } from '@trawl/contracts';
import { THREAT_INTEL_ERROR_CODES as CODES, FeedError } from './errors.ts';

const gunzipAsync = promisify(gunzip);

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface FetchOptions {
  /** Feed name, for error messages (never the source: it may hold a key). */
  feed: string;
  timeoutMs: number;
  /** Most bytes accepted (after gzip inflation). */
  maxBytes: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Aborts the fetch (provider reconfigured or closed). */
  signal?: AbortSignal | undefined;
  fetch?: FetchLike | undefined;
  /** The request carries a key: a 401/403 is the key refused (not retried), not an outage. */
  authenticated?: boolean;
}

function isHttpSource(source: string): boolean {
  return /^https?:\/\//i.test(source);
}

/** Joins a MISP feed's base (URL or folder) and a file name in it. */
export function sourceChild(base: string, name: string): string {
  if (isHttpSource(base)) return new URL(name, base.endsWith('/') ? base : `${base}/`).toString();
  return resolve(base.startsWith('file:') ? fileURLToPath(base) : base, name);
}

/**
 * The bytes of a feed: an http(s) URL fetched with a whole-download deadline and a size limit
 * (Content-Length checked first, then counted while reading: a server cannot stream past it), or a
 * file read after its size is checked. Gzip content is inflated, within the same limit. Throws
 * FeedError with a catalogued code.
 */
async function fetchFeedBytes(source: string, o: FetchOptions): Promise<Buffer> {
  const raw = isHttpSource(source) ? await fetchHttp(source, o) : await readLocal(source, o);
  if (raw.length >= 2 && raw[0] === 0x1f && raw[1] === 0x8b) {
    try {
      return await gunzipAsync(raw, { maxOutputLength: o.maxBytes });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError)
        throw new FeedError(CODES.tooLarge, o.feed, `inflates past ${o.maxBytes} bytes`);
      throw new FeedError(CODES.invalid, o.feed, 'is not valid gzip', { cause: e });
    }
  }
  return raw;
}

/** The feed as text (UTF-8, a byte-order mark dropped). */
export async function fetchFeedText(source: string, o: FetchOptions): Promise<string> {
  const bytes = await fetchFeedBytes(source, o);
  const text = new TextDecoder('utf-8').decode(bytes);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

async function readLocal(source: string, o: FetchOptions): Promise<Buffer> {
  const path = source.startsWith('file:') ? fileURLToPath(source) : resolve(source);
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    throw new FeedError(
      CODES.unavailable,
      o.feed,
      `file cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  try {
    const size = (await fh.stat()).size;
    if (size > o.maxBytes)
      throw new FeedError(CODES.tooLarge, o.feed, `is ${size} bytes, over ${o.maxBytes}`);
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

async function fetchHttp(url: string, o: FetchOptions): Promise<Buffer> {
  const doFetch: FetchLike = o.fetch ?? ((i, init) => fetch(i, init));
  let res: Awaited<ReturnType<typeof fetchBounded>>;
  try {
    // the whole download within timeoutMs and maxBytes (a declared Content-Length over it is
    // refused first); an answer outside 2xx is not read at all
    res = await fetchBounded(
      url,
      {
        method: o.method ?? 'GET',
        headers: { 'user-agent': 'trawl-threat-intel', ...(o.headers ?? {}) },
        ...(o.body === undefined ? {} : { body: o.body }),
        // a key is never carried to wherever a redirect points
        redirect: o.authenticated ? 'error' : 'follow',
      },
      {
        maxBytes: o.maxBytes,
        timeoutMs: o.timeoutMs,
        errorBytes: 0,
        signal: o.signal,
        fetch: doFetch as typeof fetch,
      },
    );
  } catch (e) {
    if (e instanceof PeerAnswerError && e.kind === 'too-large')
      throw new FeedError(CODES.tooLarge, o.feed, `is over ${o.maxBytes} bytes`);
    if (e instanceof PeerAnswerError)
      throw new FeedError(CODES.timeout, o.feed, `no complete answer within ${o.timeoutMs} ms`);
    if (o.signal?.aborted) throw new FeedError(CODES.unavailable, o.feed, 'load cancelled');
    const cause = (e as { cause?: { code?: string } }).cause?.code;
    throw new FeedError(
      CODES.unavailable,
      o.feed,
      `cannot be fetched (${cause ?? (e as Error).name ?? 'error'})`,
    );
  }
  if (o.authenticated && (res.status === 401 || res.status === 403))
    throw new FeedError(CODES.mispRejected, o.feed, `key refused (HTTP ${res.status})`, {
      retryable: false,
    });
  if (res.status < 200 || res.status > 299)
    throw new FeedError(CODES.unavailable, o.feed, `answered HTTP ${res.status}`);
  return res.body;
}
