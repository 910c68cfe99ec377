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
