/** A JSON value as YAML (block style; strings quoted when YAML would read them otherwise). */
const PLAIN = /^[A-Za-z_][A-Za-z0-9_ ./-]*$/;
const RESERVED = new Set(['true', 'false', 'null', 'yes', 'no', 'on', 'off', '~']);

function scalar(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') {
    return PLAIN.test(v) && !RESERVED.has(v.toLowerCase()) && !v.endsWith(' ')
      ? v
      : JSON.stringify(v);
  }
  return String(v);
}

export function toYaml(v: unknown, indent = 0): string {
  const pad = ' '.repeat(indent);
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return v
      .map((x) => {
        const inner = toYaml(x, indent + 2);
        return typeof x === 'object' && x !== null && !(Array.isArray(x) && x.length === 0)
          ? `${pad}- ${inner.trimStart()}`
          : `${pad}- ${inner}`;
      })
      .join('\n');
  }
  if (typeof v === 'object' && v !== null) {
    const entries = Object.entries(v);
    if (entries.length === 0) return '{}';
    return entries
      .map(([k, x]) => {
        const key = scalar(k);
        if (typeof x === 'object' && x !== null) {
          const inner = toYaml(x, indent + 2);
          return inner === '[]' || inner === '{}'
            ? `${pad}${key}: ${inner}`
            : `${pad}${key}:\n${inner}`;
        }
        return `${pad}${key}: ${scalar(x)}`;
      })
      .join('\n');
  }
  return scalar(v);
}
