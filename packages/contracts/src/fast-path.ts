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

/** The zod internals `objectKeys` reads (zod 4: `_zod.def`). */
interface ZodDefLike {
  _zod?: {
    def?: {
      type?: string;
      shape?: Record<string, unknown>;
      in?: unknown;
      innerType?: unknown;
      element?: unknown;
    };
  };
}

/** The object inside a schema's wrappers (transform input, default, optional, array element). */
function objectDef(schema: unknown): { shape?: Record<string, unknown> } | undefined {
  let s = schema as ZodDefLike | undefined;
  for (let i = 0; i < 8 && s?._zod?.def; i++) {
    const def = s._zod.def;
    if (def.type === 'object') return def;
    const next = def.type === 'pipe' ? def.in : def.type === 'array' ? def.element : def.innerType;
    s = next as ZodDefLike | undefined;
  }
  return undefined;
}

/**
 * The keys of a zod object schema, seen through the wrappers the contracts put around objects (a
 * transform's input, default, optional, an array of them); refinements keep the object as it is.
 * Empty for anything else.
 */
export function objectKeys(schema: unknown): string[] {
  return Object.keys(objectDef(schema)?.shape ?? {});
}

/** The schema of the object's member `key` (through the same wrappers), or undefined. */
export function memberSchema(schema: unknown, key: string): unknown {
  return objectDef(schema)?.shape?.[key];
}

/**
 * True when a fast path written for the keys `handled` (read and copied, or sent to zod when
 * present) covers exactly the keys of `schema`. A fast path that does not is switched off (every
 * input goes to zod), and the contracts' tests fail until it handles the new key: it would
 * otherwise drop a field the schema keeps.
 */
export function coversKeys(schema: unknown, handled: readonly string[]): boolean {
  const keys = objectKeys(schema);
  return keys.length === handled.length && keys.every((k) => handled.includes(k));
}
