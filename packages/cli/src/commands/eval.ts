import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Ctx } from '../context.ts';
import { CLI_ERRORS, CliError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';

/** The repository root: the nearest folder above `from` holding pnpm-workspace.yaml. */
function repoRoot(from: string): string | undefined {
  let dir = resolve(from);
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    const up = resolve(dir, '..');
    if (up === dir) return undefined;
    dir = up;
  }
}

/**
 * `trawl eval <dir> [args…]`: runs the analyzers' evaluation tool (packages/analyzers/src/bin/eval.ts)
 * on a folder of phishing/*.eml and ham/*.eml, offline and in-process; its own options pass through.
 */
export async function evalCommand(ctx: Ctx, args: string[]): Promise<number> {
  return analyzersTool(ctx, 'eval.ts', args);
}

/**
 * `trawl symbols [--json|--markdown]`: every symbol with the score the scorer uses, its group and
 * its reason (packages/analyzers/src/bin/symbols.ts, offline, reading the local configuration).
 */
export async function symbolsCommand(ctx: Ctx, args: string[]): Promise<number> {
  return analyzersTool(ctx, 'symbols.ts', args);
}

export async function analyzersTool(ctx: Ctx, bin: string, args: string[]): Promise<number> {
  const root = repoRoot(ctx.io.cwd) ?? repoRoot(new URL('.', import.meta.url).pathname);
  const tool = root ? join(root, 'packages/analyzers/src/bin', bin) : undefined;
  if (!root || !tool || !existsSync(tool)) {
    throw new CliError(
      CLI_ERRORS.input,
      `the analyzers' tools (packages/analyzers/src/bin/${bin}) are not installed here`,
      EXIT.error,
    );
  }
  if (!ctx.io.spawn)
    throw new CliError(CLI_ERRORS.input, 'cannot start processes here', EXIT.error);
  // paths given relative to the caller's folder (the tool runs in the repository root)
  const abs = args.map((a) =>
    !a.startsWith('-') && existsSync(resolve(ctx.io.cwd, a)) ? resolve(ctx.io.cwd, a) : a,
  );
  const tsx = join(root, 'node_modules/.bin/tsx');
  return ctx.io.spawn(existsSync(tsx) ? tsx : 'tsx', [tool, ...abs], { cwd: root });
}
