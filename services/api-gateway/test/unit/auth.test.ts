import { createMemoryCache } from '@trawl/platform';
import { describe, expect, it } from 'vitest';
import { createLoginThrottle } from '../../src/auth/login-throttle.ts';
import {
  hashPassword,
  safeEqual,
  secretMatcher,
  verifyPassword,
} from '../../src/auth/passwords.ts';
import { createTokenService } from '../../src/auth/tokens.ts';
import { hostAllowed } from '../../src/plugins/edge.ts';

describe('passwords', () => {
  it('verifies the right password and refuses a wrong one or a mangled hash', async () => {
    const h = await hashPassword('a long enough password');
    expect(h).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await verifyPassword('a long enough password', h)).toBe(true);
    expect(await verifyPassword('a long enough passwore', h)).toBe(false);
    expect(await verifyPassword('x', 'plain-text')).toBe(false);
    expect(h).not.toBe(await hashPassword('a long enough password'));
  });
  it('compares secrets of different lengths without throwing', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
  it('a matcher for one fixed secret answers as safeEqual does', () => {
    const isKey = secretMatcher('internal-key-0123456789');
    for (const candidate of [
      'internal-key-0123456789',
      'internal-key-012345678',
      'internal-key-01234567890',
      '',
      'x',
    ])
      expect(isKey(candidate)).toBe(safeEqual(candidate, 'internal-key-0123456789'));
    expect(isKey('internal-key-0123456789')).toBe(true);
  });
});

describe('access tokens', () => {
  const secretKey = 'unit-secret-0123456789abcdef0123456789';
  it('round-trips subject and roles', async () => {
    const t = createTokenService({ secretKey, accessTokenExpireMinutes: 30 });
    const { token, expiresIn } = await t.issueAccess('ann', ['analyst']);
    expect(expiresIn).toBe(1800);
    expect(await t.verifyAccess(token)).toEqual({
      kind: 'user',
      username: 'ann',
      roles: ['analyst'],
    });
  });
  it('tells an expired token from a forged one', async () => {
    let now = Date.parse('2024-01-01T00:00:00Z');
    const t = createTokenService({
      secretKey,
      accessTokenExpireMinutes: 1,
      now: () => now,
      cacheSeconds: 0,
    });
    const { token } = await t.issueAccess('ann', ['viewer']);
    now += 61_000;
    await expect(t.verifyAccess(token)).rejects.toMatchObject({
      status: 401,
      code: 'TRAWL_ERR_TOKEN_EXPIRED',
    });
    const other = createTokenService({
      secretKey: `${secretKey}x`,
      accessTokenExpireMinutes: 1,
      now: () => now,
    });
    await expect(other.verifyAccess(token)).rejects.toMatchObject({
      code: 'TRAWL_ERR_AUTH_INVALID_TOKEN',
    });
  });
  it('does not serve a cached verification past the expiry', async () => {
    let now = Date.parse('2024-01-01T00:00:00Z');
    const t = createTokenService({
      secretKey,
      accessTokenExpireMinutes: 1,
      now: () => now,
      cacheSeconds: 600,
    });
    const { token } = await t.issueAccess('ann', ['viewer']);
    await t.verifyAccess(token);
    now += 61_000;
    await expect(t.verifyAccess(token)).rejects.toMatchObject({ code: 'TRAWL_ERR_TOKEN_EXPIRED' });
  });
});

describe('login throttle', () => {
  it('locks a (user, address) pair out after the free failures, with a growing delay, and a success clears it', async () => {
    let now = 1_000_000;
    const cache = createMemoryCache({ maxEntries: 100, now: () => now });
    const th = createLoginThrottle({ cache, free: 3, maxSeconds: 60, now: () => now });
    for (let i = 0; i < 2; i++) await th.failed('bob', '10.0.0.1');
    expect(await th.check('bob', '10.0.0.1')).toBe(0);
    await th.failed('bob', '10.0.0.1');
    expect(await th.check('bob', '10.0.0.1')).toBe(1);
    await th.failed('bob', '10.0.0.1');
    expect(await th.check('bob', '10.0.0.1')).toBe(2);
    expect(await th.check('bob', '10.0.0.2')).toBe(0);
    now += 2_000;
    expect(await th.check('bob', '10.0.0.1')).toBe(0);
    await th.succeeded('bob', '10.0.0.1');
    await th.failed('bob', '10.0.0.1');
    expect(await th.check('bob', '10.0.0.1')).toBe(0);
  });
});

describe('trusted hosts', () => {
  it('matches exact names, wildcard subdomains, and anything for * or an empty list', () => {
    const t = ['localhost', '127.0.0.1', '*.trawl.example'];
    expect(hostAllowed('localhost', t)).toBe(true);
    expect(hostAllowed('LOCALHOST', t)).toBe(true);
    expect(hostAllowed('api.trawl.example', t)).toBe(true);
    expect(hostAllowed('trawl.example', t)).toBe(false);
    expect(hostAllowed('eviltrawl.example', t)).toBe(false);
    expect(hostAllowed('evil.example', t)).toBe(false);
    expect(hostAllowed('anything', ['*'])).toBe(true);
    expect(hostAllowed('anything', [])).toBe(true);
  });
});
