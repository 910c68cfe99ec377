import { hash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * scrypt password hashes: `scrypt$N$r$p$<salt b64>$<hash b64>`. Parameters are stored with the hash,
 * so they can be raised without breaking existing users: a login with a hash made with other
 * parameters than these is verified with its own, then hashed again with these (`needsRehash`).
 *
 * OWASP's minimum for scrypt: N=2^17, r=8, p=1 (128 MiB and a few hundred ms per hash). scrypt needs
 * 128·N·r bytes, which is exactly Node's default `maxmem` (32 MiB) times four: `maxmem` is passed.
 */
const SCRYPT_PARAMS = { N: 2 ** 17, r: 8, p: 1, keylen: 32 } as const;

/** Parameters a stored hash may carry (bounds what a forged or corrupt row can make us compute). */
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;

function derive(
  password: string,
  salt: Buffer,
  n: number,
  r: number,
  p: number,
  keylen: number,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, { N: n, r, p, maxmem: 128 * n * r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** Hashes a password for storage (scrypt, a random salt, its parameters written with it). */
export async function hashPassword(password: string): Promise<string> {
  const { N, r, p, keylen } = SCRYPT_PARAMS;
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, r, p, keylen);
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** A hash of a random password: verifying against it costs the same as a real user (no user enumeration by timing). */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return dummyHash;
}

interface Parsed {
  n: number;
  r: number;
  p: number;
  salt: Buffer;
  expected: Buffer;
}

function parse(stored: string): Parsed | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const n = Number(parts[1]);
  const r = Number(parts[2]);
  const p = Number(parts[3]);
  const salt = Buffer.from(parts[4] ?? '', 'base64');
  const expected = Buffer.from(parts[5] ?? '', 'base64');
  const ok =
    Number.isInteger(n) &&
    n > 1 &&
    n <= MAX_N &&
    (n & (n - 1)) === 0 &&
    Number.isInteger(r) &&
    r >= 1 &&
    r <= MAX_R &&
    Number.isInteger(p) &&
    p >= 1 &&
    p <= MAX_P &&
    expected.length >= 16 &&
    expected.length <= 64;
  return ok ? { n, r, p, salt, expected } : null;
}

/** Checks a password against its stored hash (the comparison in constant time). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const h = parse(stored);
  if (!h) return false;
  const key = await derive(password, h.salt, h.n, h.r, h.p, h.expected.length);
  return key.length === h.expected.length && timingSafeEqual(key, h.expected);
}

/** True when a stored hash was made with other parameters than today's: hash it again on login. */
export function needsRehash(stored: string): boolean {
  const h = parse(stored);
  if (!h) return false;
  const { N, r, p, keylen } = SCRYPT_PARAMS;
  return h.n !== N || h.r !== r || h.p !== p || h.expected.length !== keylen;
}

/** sha256 digest of a string, one call (crypto.hash, Node ≥ 20.12) rather than a Hash object. */
function sha256(s: string): Buffer {
  return hash('sha256', s, 'buffer');
}

/** Constant-time comparison of two secrets of any length (compares their sha256 digests). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/**
 * A constant-time check against one fixed secret (the internal API key): its digest is computed
 * once, each candidate's per call. Same answers as `safeEqual(candidate, secret)`.
 */
export function secretMatcher(secret: string): (candidate: string) => boolean {
  const expected = sha256(secret);
  return (candidate) => timingSafeEqual(sha256(candidate), expected);
}
