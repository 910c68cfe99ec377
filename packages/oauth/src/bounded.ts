import { PeerAnswerError, readBounded } from '@trawl/contracts';
import { ApiAnswerTooLargeError } from './errors.ts';

/**
 * The body of `res`, read up to `maxBytes` with the shared bounded read (`@trawl/contracts`,
 * issue 28): a Content-Length above it, or a body that grows past it, stops the read (the
 * connection is closed) and throws. The time bound is the request's signal.
 */
export async function readApiAnswer(
  res: Response,
  maxBytes: number,
  what: string,
): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new ApiAnswerTooLargeError(what, maxBytes);
  }
  try {
    return (await readBounded(res.body, { maxBytes })).bytes;
  } catch (err) {
    if (err instanceof PeerAnswerError) throw new ApiAnswerTooLargeError(what, maxBytes);
    throw err;
  }
}

/** Seconds of a Retry-After header (delta-seconds or an HTTP date); undefined when absent or bad. */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value === '') return undefined;
  if (/^\d{1,9}$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
