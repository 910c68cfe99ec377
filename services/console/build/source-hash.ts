import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** services/console/ */
export const CONSOLE_ROOT = fileURLToPath(new URL('..', import.meta.url));

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
}

/** The files a build is made from, relative to CONSOLE_ROOT, '/'-separated, sorted. */
export function sourceFiles(root = CONSOLE_ROOT): string[] {
  const files: string[] = [];
  walk(join(root, 'src'), files);
  walk(join(root, 'public'), files);
  for (const f of ['index.html', 'package.json', 'build/build.ts', 'build/source-hash.ts'])
    files.push(join(root, f));
  return files.map((f) => relative(root, f).split(sep).join('/')).sort();
}

/**
 * sha256 over every source file's path and bytes: written into dist/build-info.json by the build,
 * recomputed by a unit test that fails when dist/ was not rebuilt after a source changed.
 */
export function sourceHash(root = CONSOLE_ROOT): string {
  const h = createHash('sha256');
  for (const f of sourceFiles(root)) {
    const bytes = readFileSync(join(root, f));
    h.update(f).update('\0').update(String(bytes.length)).update('\0').update(bytes);
  }
  return h.digest('hex');
}
