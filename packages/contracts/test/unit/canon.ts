import { expect } from 'vitest';

/** A value's structure with key order, prototypes, -0 and keys holding undefined made visible. */
export function canon(v: unknown): unknown {
  if (Array.isArray(v)) return ['array', v.length, ...v.map(canon)];
  if (typeof v === 'object' && v !== null) {
    return [
      'object',
      Object.getPrototypeOf(v) === Object.prototype,
      ...Object.keys(v).map((k) => [k, canon((v as Record<string, unknown>)[k])]),
    ];
  }
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
  return [typeof v, String(v)];
}

type Result<T> = { success: true; data: T } | { success: false; error: { issues: unknown[] } };

/**
 * Asserts that a fast path's result is zod's: same success, same data (structure, key order), same
 * issues. Answers whether it succeeded.
 */
export function expectSameResult<T>(ours: Result<T>, zod: Result<T>): boolean {
  expect(ours.success).toBe(zod.success);
  if (ours.success && zod.success) {
    expect(canon(ours.data)).toEqual(canon(zod.data));
    expect(Object.keys(ours)).toEqual(Object.keys(zod));
  } else if (!ours.success && !zod.success) {
    expect(ours.error.issues).toEqual(zod.error.issues);
  }
  return ours.success;
}
