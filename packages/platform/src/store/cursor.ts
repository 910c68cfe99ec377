import { badCursor } from '../errors.ts';

/** Opaque cursor: base64url of a JSON array of the sort key of the last row of a page. */
export function encodeCursor(parts: (string | number)[]): string {
  return Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, arity: number): string[] {
  try {
    const parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(parts) &&
      parts.length === arity &&
      parts.every((p) => typeof p === 'string' && p.length > 0 && p.length < 200)
    ) {
      return parts as string[];
    }
  } catch {
    // fall through
  }
  throw badCursor();
}
