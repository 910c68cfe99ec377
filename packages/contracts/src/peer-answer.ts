import { PEER_ERROR_CODES, TrawlError } from './errors.ts';

/**
 * Reading a peer's answer within a size and a time budget (issue 28). A peer is anything Trawl
 * calls that answers with bytes it did not write: a webhook receiver, a plugin, a threat-intel
 * feed, an LLM server, a retriever, the gateway seen from another service. Every such read goes
 * through `readBounded` (a body already open) or `fetchBounded` (an HTTP exchange): at most
 * `maxBytes` are kept, the rest is never read (the body is cancelled, which closes its socket),
 * and the whole exchange ends at its deadline. An answer outside 2xx is read only for a short text
 * (`errorBytes`): its status says what happened, its page is never kept whole.
 */

export class PeerAnswerError extends TrawlError {
  constructor(
    readonly kind: 'too-large' | 'timeout',
    message: string,
    opts: { cause?: unknown } = {},
  ) {
    super(kind === 'too-large' ? PEER_ERROR_CODES.tooLarge : PEER_ERROR_CODES.timeout, message, {
      status: 502,
      retryable: kind === 'timeout',
      ...opts,
    });
  }
}

/** A body: a web stream (fetch) or a Node stream (undici's request, http.IncomingMessage). */
export type PeerBody =
  | ReadableStream<Uint8Array>
  | (AsyncIterable<Uint8Array> & { destroy(error?: Error): unknown });

/** A body read up to a bound. */
export interface BoundedBody {
  bytes: Buffer;
  /** More bytes followed the ones kept (read with `over: 'truncate'`); they were not read. */
  truncated: boolean;
}

/** How a body is read: its bound, and whether more bytes fail or are cut. */
export interface BoundedReadOptions {
  /** Most bytes kept. */
  maxBytes: number;
  /** Past maxBytes: throw PeerAnswerError `too-large` (default), or keep the first maxBytes. */
  over?: 'fail' | 'truncate';
  /** Ends the read: the body is cancelled and the signal's reason thrown. */
  signal?: AbortSignal | undefined;
}

function isWebStream(b: PeerBody): b is ReadableStream<Uint8Array> {
  return typeof (b as ReadableStream<Uint8Array>).getReader === 'function';
}

/** One chunk at a time from either kind of body, and a way to stop it that closes the socket. */
function chunksOf(body: PeerBody): { next(): Promise<Uint8Array | null>; stop(): Promise<void> } {
  if (isWebStream(body)) {
    const reader = body.getReader();
    return {
      async next() {
        const r = await reader.read();
        return r.done ? null : r.value;
      },
      stop: () => reader.cancel().catch(() => undefined),
    };
  }
  const it = body[Symbol.asyncIterator]();
  return {
    async next() {
      const r = await it.next();
      return r.done ? null : r.value;
    },
    async stop() {
      body.destroy();
    },
  };
}

/** Rejects with the signal's reason once it aborts (never resolves). */
function aborted(signal: AbortSignal): { promise: Promise<never>; dispose(): void } {
  let onAbort = () => {};
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  promise.catch(() => undefined);
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

/**
 * Reads at most `maxBytes` of `body`; past that the body is cancelled (its socket closed, the rest
 * never read). An aborted `signal` cancels it too and throws the signal's reason.
 */
export async function readBounded(
  body: PeerBody | null | undefined,
  o: BoundedReadOptions,
): Promise<BoundedBody> {
  if (!body) return { bytes: Buffer.alloc(0), truncated: false };
  const source = chunksOf(body);
  const stop = o.signal ? aborted(o.signal) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const chunk = await (stop ? Promise.race([source.next(), stop.promise]) : source.next());
      if (chunk === null) return { bytes: Buffer.concat(chunks, size), truncated: false };
      const room = o.maxBytes - size;
      if (chunk.byteLength > room) {
        if ((o.over ?? 'fail') === 'fail') {
          throw new PeerAnswerError('too-large', `the answer is larger than ${o.maxBytes} bytes`);
        }
        await source.stop();
        if (room > 0) chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, room));
        return { bytes: Buffer.concat(chunks, o.maxBytes), truncated: true };
      }
      chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      size += chunk.byteLength;
    }
  } catch (e) {
    await source.stop();
    throw e;
  } finally {
    stop?.dispose();
  }
}

/** A peer's HTTP answer read within its bounds. */
export interface PeerAnswer {
  status: number;
  headers: Headers;
  body: Buffer;
  /** The body was longer than what was read (an answer outside 2xx: only `errorBytes` are). */
  truncated: boolean;
}

/** The bounds of fetchBounded: bytes, deadline, what an error answer may keep. */
export interface FetchBoundedOptions {
  /** Most bytes of a 2xx answer; a larger one throws PeerAnswerError `too-large`. */
  maxBytes: number;
  /** The whole exchange, from the request to the last byte of the answer. */
  timeoutMs: number;
  /** Bytes read of an answer outside 2xx (default 512); the rest is not read. */
  errorBytes?: number;
  /**
   * A 2xx body over maxBytes: throw PeerAnswerError `too-large` (default), or keep the first
   * maxBytes and leave the rest unread (a caller that needs only the status: maxBytes 0).
   */
  okOver?: 'fail' | 'truncate';
  /** The caller's own cancellation: its reason is thrown as it is. */
  signal?: AbortSignal | undefined;
  fetch?: typeof fetch;
}

/**
 * One HTTP exchange with a bounded answer: PeerAnswerError `timeout` past `timeoutMs` (headers or
 * body), `too-large` for a 2xx body over `maxBytes` (a declared Content-Length over it is refused
 * before a byte is read); an answer outside 2xx keeps at most `errorBytes`. Network errors and
 * the caller's abort are thrown as fetch throws them.
 */
export async function fetchBounded(
  url: string | URL,
  init: Omit<RequestInit, 'signal'>,
  o: FetchBoundedOptions,
): Promise<PeerAnswer> {
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([timeout, o.signal]) : timeout;
  const timedOut = (cause: unknown) =>
    new PeerAnswerError('timeout', `no complete answer within ${o.timeoutMs} ms`, { cause });
  let res: Response;
  try {
    res = await (o.fetch ?? fetch)(url, { ...init, signal });
  } catch (e) {
    if (timeout.aborted && !o.signal?.aborted) throw timedOut(e);
    throw e;
  }
  const ok = res.status >= 200 && res.status < 300;
  const okOver = o.okOver ?? 'fail';
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (ok && okOver === 'fail' && Number.isFinite(declared) && declared > o.maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new PeerAnswerError('too-large', `the answer is ${declared} bytes, over ${o.maxBytes}`);
  }
  try {
    const read = await readBounded(res.body, {
      maxBytes: ok ? o.maxBytes : (o.errorBytes ?? 512),
      over: ok ? okOver : 'truncate',
      signal,
    });
    return {
      status: res.status,
      headers: res.headers,
      body: read.bytes,
      truncated: read.truncated,
    };
  } catch (e) {
    if (timeout.aborted && !o.signal?.aborted) throw timedOut(e);
    throw e;
  }
}

/** Content types whose text may be shown as a peer's error text: plain text and JSON. */
function isShowableText(contentType: string | null): boolean {
  const t = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return t === 'text/plain' || t === 'application/json' || t.endsWith('+json');
}

/**
 * What may be said of an answer in a log, an error or a delivery log: its status, content type and
 * length, and a short one-line text only when the body is plain text or JSON. An HTML page (an
 * internal service's error page, a proxy's) is never quoted.
 */
export function describeAnswer(a: PeerAnswer, maxChars = 200): string {
  const type = (a.headers.get('content-type') ?? '').split(';')[0]?.trim() || 'no content type';
  const declared = a.headers.get('content-length');
  const length =
    declared !== null && /^\d{1,15}$/.test(declared)
      ? `${declared} bytes`
      : `${a.truncated ? 'over ' : ''}${a.body.length} bytes`;
  let out = `HTTP ${a.status} (${type}, ${length})`;
  if (a.body.length > 0 && isShowableText(a.headers.get('content-type'))) {
    let text = '';
    let cut = a.truncated;
    for (const c of a.body.toString('utf8')) {
      if (text.length >= maxChars) {
        cut = true;
        break;
      }
      const code = c.codePointAt(0) ?? 0;
      text += code < 0x20 || code === 0x7f || c === '\ufffd' ? ' ' : c;
    }
    text = text.replace(/ {2,}/g, ' ').trim();
    if (text) out += `: ${text}${cut ? '…' : ''}`;
  }
  return out;
}
