import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is `whsec_` + base64
 * of 32 random bytes; the HMAC-SHA256 key is those bytes; the signed content is
 * `${webhook-id}.${webhook-timestamp}.${body}`; the header is `v1,<base64 signature>` (several
 * space-separated when a secret is being rotated).
 */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** A new random webhook signing secret. */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

function keyOf(secret: string): Buffer {
  const b64 = secret.startsWith(WEBHOOK_SECRET_PREFIX)
    ? secret.slice(WEBHOOK_SECRET_PREFIX.length)
    : secret;
  return Buffer.from(b64, 'base64');
}

/** `v1,<base64 HMAC-SHA256>` of `id.timestamp.body` with the secret's key. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string) {
  const mac = createHmac('sha256', keyOf(secret))
    .update(`${id}.${timestampSeconds}.${body}`)
    .digest('base64');
  return `v1,${mac}`;
}

/**
 * Checks a `webhook-signature` header (any of its space-separated `v1,` signatures) in constant
 * time per signature, and that the timestamp is within `toleranceSeconds` of `nowSeconds`.
 */
export function verifyWebhook(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  opts: { nowSeconds?: number; toleranceSeconds?: number } = {},
): boolean {
  const ts = Number(headers.timestamp);
  if (!Number.isInteger(ts)) return false;
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - ts) > (opts.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signWebhook(secret, headers.id, ts, body));
  let ok = false;
  for (const part of headers.signature.split(' ')) {
    const got = Buffer.from(part);
    if (got.length === expected.length && timingSafeEqual(got, expected)) ok = true;
  }
  return ok;
}
