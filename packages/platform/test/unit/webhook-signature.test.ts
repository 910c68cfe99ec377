import { describe, expect, it } from 'vitest';
import {
  backoffDelayMs,
  generateWebhookSecret,
  signWebhook,
  verifyWebhook,
} from '../../src/index.ts';

describe('Standard Webhooks signatures', () => {
  // the example of the Standard Webhooks specification (and Svix's libraries)
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
  const ts = 1614265330;
  const body = '{"test": 2432232314}';

  it('signs id.timestamp.body with the base64 part of the secret', () => {
    expect(signWebhook(secret, id, ts, body)).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('verifies a signature, any of several, and refuses a changed body, id, old timestamp', () => {
    const sig = signWebhook(secret, id, ts, body);
    const h = { id, timestamp: String(ts), signature: sig };
    expect(verifyWebhook(secret, h, body, { nowSeconds: ts })).toBe(true);
    expect(
      verifyWebhook(secret, { ...h, signature: `v1,AAAA ${sig}` }, body, { nowSeconds: ts }),
    ).toBe(true);
    expect(verifyWebhook(secret, h, `${body} `, { nowSeconds: ts })).toBe(false);
    expect(verifyWebhook(secret, { ...h, id: 'msg_other' }, body, { nowSeconds: ts })).toBe(false);
    expect(verifyWebhook(secret, h, body, { nowSeconds: ts + 301 })).toBe(false);
  });

  it('generates whsec_ secrets of 32 random bytes', () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(a);
  });
});

describe('webhook backoff', () => {
  const s = { backoffBaseMs: 1000, backoffMaxMs: 60_000 };
  it('full jitter: a random delay up to base·2^(n−1), capped', () => {
    expect(backoffDelayMs(1, s, () => 0.999)).toBe(999);
    expect(backoffDelayMs(3, s, () => 0.5)).toBe(2000);
    expect(backoffDelayMs(20, s, () => 0.999)).toBe(59_940);
    expect(backoffDelayMs(5, s, () => 0)).toBe(0);
  });
});
