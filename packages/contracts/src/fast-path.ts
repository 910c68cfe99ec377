/**
 * Shared pieces of the hand-written fast paths that give exactly a zod schema's result for common,
 * valid, plain-data input (and leave everything else to zod, which stays the contract).
 */

/** Marks "not on the fast path: let zod decide". */
export const SLOW = Symbol('slow');

export function isObjectLike(v: unknown): v is Record<PropertyKey, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A plain object (literal or JSON.parse) that zod's object and record parsers read key by key. */
export function isPlainData(v: unknown): v is Record<string, unknown> {
  if (!isObjectLike(v) || Object.getPrototypeOf(v) !== Object.prototype) return false;
  // zod's plain-object test reads `constructor`; an own `__proto__` would be set as a prototype
  return !Object.hasOwn(v, '__proto__') && !Object.hasOwn(v, 'constructor');
}

/**
 * A record of plain data, copied as `z.record(z.string(), z.unknown())` copies it: its own
 * enumerable string keys in order, values as they are (zod skips non-enumerable keys too). Symbol
 * keys and an own `__proto__` or `constructor` are left to zod.
 */
export function fastRecord(v: unknown): Record<string, unknown> | typeof SLOW {
  if (!isPlainData(v)) return SLOW;
  if (Object.getOwnPropertySymbols(v).length !== 0) return SLOW;
  return Object.assign({}, v);
}
