import { hash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * scrypt password hashes: `scrypt$N$r$p$<salt b64>$<hash b64>`. Parameters are stored with the hash
 * so they can be raised later without breaking existing users.
 */
const N = 16384;
const R = 8;
const P = 1;
const KEYLEN = 32;

function derive(
  password: string,
  salt: Buffer,
  n: number,
  r: number,
  p: number,
  keylen: number,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, { N: n, r, p, maxmem: 128 * n * r * 2 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P, KEYLEN);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** A hash of a random password: verifying against it costs the same as a real user (no user enumeration by timing). */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return dummyHash;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const n = Number(parts[1]);
  const r = Number(parts[2]);
  const p = Number(parts[3]);
  const salt = Buffer.from(parts[4] ?? '', 'base64');
  const expected = Buffer.from(parts[5] ?? '', 'base64');
  if (
    !Number.isInteger(n) ||
    !Number.isInteger(r) ||
    !Number.isInteger(p) ||
    expected.length === 0
  ) {
    return false;
  }
  const key = await derive(password, salt, n, r, p, expected.length);
  return key.length === expected.length && timingSafeEqual(key, expected);
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
