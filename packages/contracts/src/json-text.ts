import { z } from 'zod';

/**
 * A string holding JSON that `schema` reads (a setting given as JSON text: verdict rules, a key
 * file's content). Text that does not parse is one problem, `message`; the value is never quoted.
 */
export function jsonText<T extends z.ZodType>(schema: T, message: string) {
  return z
    .string()
    .transform((s, ctx) => {
      try {
        return JSON.parse(s) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
    })
    .pipe(schema);
}
