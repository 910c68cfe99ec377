/**
 * The `options` of node:util `parseArgs` for a command line of plain options: the `strings` take a
 * value (`--jobs 100000`), the `flags` do not (`--pglite`). Spread it beside any option that needs
 * more (`short`, `multiple`).
 */
export function cliOptions<const S extends string, const F extends string = never>(
  strings: readonly S[],
  flags: readonly F[] = [],
): { [K in S]: { type: 'string' } } & { [K in F]: { type: 'boolean' } } {
  const out: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const name of strings) out[name] = { type: 'string' };
  for (const name of flags) out[name] = { type: 'boolean' };
  return out as { [K in S]: { type: 'string' } } & { [K in F]: { type: 'boolean' } };
}
