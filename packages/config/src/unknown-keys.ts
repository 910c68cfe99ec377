import { escapePointerToken } from '@trawl/contracts';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Keys present in the raw document but dropped by the schema (typos such as `depend_on`): zod objects
 * strip unknown keys silently, so they are found by walking the input beside the parsed output.
 */
export function unknownKeys(raw: unknown, parsed: unknown, prefix = ''): string[] {
  const out: string[] = [];
  if (Array.isArray(raw) && Array.isArray(parsed)) {
    raw.forEach((r, i) => {
      out.push(...unknownKeys(r, parsed[i], `${prefix}/${i}`));
    });
  } else if (isPlainObject(raw) && isPlainObject(parsed)) {
    for (const [k, v] of Object.entries(raw)) {
      const path = `${prefix}/${escapePointerToken(k)}`;
      if (!(k in parsed)) out.push(path);
      else out.push(...unknownKeys(v, parsed[k], path));
    }
  }
  return out;
}
