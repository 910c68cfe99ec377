import { createHash, timingSafeEqual } from 'node:crypto';

/** Constant-time comparison of a presented key with the expected one (hashes equalise lengths). */
export function keyMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
