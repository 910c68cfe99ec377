import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

function findUp(start: string): string | null {
  let dir = resolve(start);
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * The repository root: the nearest directory holding `pnpm-workspace.yaml`, searched upwards from
 * `start` (default: the current directory, then this package's own location); else `start` / cwd.
 */
export function findRepoRoot(start?: string): string {
  const from = start ?? process.cwd();
  return (
    findUp(from) ??
    (start === undefined ? findUp(dirname(fileURLToPath(import.meta.url))) : null) ??
    resolve(from)
  );
}

/** The shared corpus (`<repo root>/../shared/corpus`), or null when it is absent. */
export function corpusDir(root: string = findRepoRoot()): string | null {
  const dir = resolve(root, '..', 'shared', 'corpus');
  try {
    return statSync(dir).isDirectory() ? dir : null;
  } catch {
    return null;
  }
}
