import type { Ctx } from './context.ts';
import { EXIT } from './exit-codes.ts';

/** A plain-text table: the header row, then the rows; each column but the last padded to its width. */
export function table(header: string[], rows: string[][], widths: number[]): string {
  return [header, ...rows]
    .map((r) => r.map((c, i) => (i < widths.length ? c.padEnd(widths[i] ?? 0) : c)).join(' '))
    .join('\n');
}

/** GET a list (`{items}`) and print it: as JSON with --json, else `none` or the formatted items. */
export async function printList<T>(
  ctx: Ctx,
  path: string,
  none: string,
  format: (items: T[]) => string,
): Promise<number> {
  const r = await ctx.api().request<{ items: T[] }>('GET', path);
  if (ctx.json) ctx.printJson(r);
  else if (r.items.length === 0) ctx.print(none);
  else ctx.print(format(r.items));
  return EXIT.ok;
}
