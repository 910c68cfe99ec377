import { randomBytes, scryptSync } from 'node:crypto';
import { createMemoryCache } from '@trawl/platform';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createLoginThrottle } from '../../src/auth/login-throttle.ts';
import { createPasswordHasher } from '../../src/auth/password-hasher.ts';
import { passwordProblems } from '../../src/auth/password-policy.ts';
import {
  hashPassword,
  needsRehash,
  safeEqual,
  secretMatcher,
  verifyPassword,
} from '../../src/auth/passwords.ts';
import { createTokenService } from '../../src/auth/tokens.ts';
import { hostAllowed } from '../../src/plugins/edge.ts';

describe('passwords', () => {
  it('verifies the right password and refuses a wrong one or a mangled hash', async () => {
    const h = await hashPassword('a long enough password');
    // OWASP's scrypt parameters: N=2^17, r=8, p=1 (needs maxmem above Node's 32 MiB default)
    expect(h).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(needsRehash(h)).toBe(false);
    expect(await verifyPassword('a long enough password', h)).toBe(true);
    expect(await verifyPassword('a long enough passwore', h)).toBe(false);
    expect(await verifyPassword('x', 'plain-text')).toBe(false);
    expect(h).not.toBe(await hashPassword('a long enough password'));
  });
  it('verifies a hash made with the old parameters (N=2^14) and says it needs a rehash', async () => {
    const salt = randomBytes(16);
    const key = scryptSync('an older password', salt, 32, { N: 16384, r: 8, p: 1 });
    const old = `scrypt$16384$8$1$${salt.toString('base64')}$${key.toString('base64')}`;
    expect(await verifyPassword('an older password', old)).toBe(true);
    expect(needsRehash(old)).toBe(true);
  });
  it('refuses stored parameters that would cost unbounded memory or time', async () => {
    const salt = randomBytes(16).toString('base64');
    const key = randomBytes(32).toString('base64');
    for (const params of ['1048577$8$1', '4194304$8$1', '16384$8$64', '16384$64$1', '12345$8$1']) {
      expect(await verifyPassword('x', `scrypt$${params}$${salt}$${key}`)).toBe(false);
    }
  });
  it('runs at most `concurrency` hashes at once and refuses beyond its queue (503 TRAWL_ERR_AUTH_BUSY)', async () => {
    const hasher = createPasswordHasher({ concurrency: 1, maxQueued: 1 });
    const h = await hashPassword('a long enough password');
    const results = await Promise.allSettled([
      hasher.verify('a long enough password', h),
      hasher.verify('wrong', h),
      hasher.verify('a long enough password', h),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({
      code: 'TRAWL_ERR_AUTH_BUSY',
      status: 503,
    });
    expect(results.slice(0, 2).map((r) => (r as PromiseFulfilledResult<boolean>).value)).toEqual([
      true,
      false,
    ]);
    // and it is usable again afterwards
    expect(await hasher.verify('a long enough password', h)).toBe(true);
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

describe('password rule', () => {
  it('asks for 12 characters or a passphrase, and refuses trivial long ones', () => {
    expect(passwordProblems('correct horse battery staple')).toEqual([]);
    expect(passwordProblems('Tr4wl-adm1n-2024')).toEqual([]);
    expect(passwordProblems('short')).toEqual([expect.stringContaining('12 characters')]);
    expect(passwordProblems('aaaaaaaaaaaaaaaa')).toEqual([expect.stringContaining('different')]);
    expect(passwordProblems('abcdeabcdeabcde')).toEqual([]);
    expect(passwordProblems('abcdabcdabcdabcd')).toEqual([expect.stringContaining('5 different')]);
    expect(passwordProblems('xyzwqxyzwqxyzwq')).toEqual([]);
    expect(passwordProblems('abcdefabcdefabcdef').length).toBe(0);
    expect(passwordProblems('Password1234')).toEqual(['is a well-known password']);
    expect(passwordProblems('my-admin-is-great', 'admin')).toEqual([
      'must not contain the username',
    ]);
    // characters, not UTF-16 units
    expect(passwordProblems('🐟🐠🐡🦈🐙🦑🦐🦞🦀🐚🐳🐋')).toEqual([]);
  });
});

describe('access tokens', () => {
  const secretKey = 'unit-secret-0123456789abcdef0123456789';
  it('round-trips subject and roles', async () => {
    const t = createTokenService({ secretKey, accessTokenExpireMinutes: 30 });
    const { token, expiresIn } = await t.issueAccess('ann', ['analyst'], 7);
    expect(expiresIn).toBe(1800);
    expect(await t.verifyAccess(token)).toEqual({
      kind: 'user',
      username: 'ann',
      roles: ['analyst'],
      version: 7,
    });
  });
  it('refuses a correctly signed token without exp, or without the access version', async () => {
    const t = createTokenService({ secretKey, accessTokenExpireMinutes: 30, cacheSeconds: 0 });
    const key = new TextEncoder().encode(secretKey);
    const base = () =>
      new SignJWT({ roles: ['admin'], typ: 'access', ver: 1 })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('ann')
        .setIssuer('trawl')
        .setAudience('trawl-api')
        .setIssuedAt();
    const noExp = await base().sign(key);
    await expect(t.verifyAccess(noExp)).rejects.toMatchObject({
      code: 'TRAWL_ERR_AUTH_INVALID_TOKEN',
    });
    const noVer = await new SignJWT({ roles: ['admin'], typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('ann')
      .setIssuer('trawl')
      .setAudience('trawl-api')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);
    await expect(t.verifyAccess(noVer)).rejects.toMatchObject({
      code: 'TRAWL_ERR_AUTH_INVALID_TOKEN',
    });
    expect(await t.verifyAccess(await base().setExpirationTime('5m').sign(key))).toMatchObject({
      username: 'ann',
      version: 1,
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
    const { token } = await t.issueAccess('ann', ['viewer'], 1);
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
    const { token } = await t.issueAccess('ann', ['viewer'], 1);
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
