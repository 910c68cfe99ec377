import { ApiAnswerTooLargeError } from './errors.ts';

/**
 * The body of `res`, read up to `maxBytes`: a Content-Length above it, or a body that grows past it,
 * stops the read (the connection is released) and throws. The time bound is the request's signal.
 */
export async function readBounded(res: Response, maxBytes: number, what: string): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new ApiAnswerTooLargeError(what, maxBytes);
  }
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ApiAnswerTooLargeError(what, maxBytes);
    }
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  }
  return Buffer.concat(chunks, total);
}

/** Seconds of a Retry-After header (delta-seconds or an HTTP date); undefined when absent or bad. */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value === '') return undefined;
  if (/^\d{1,9}$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
