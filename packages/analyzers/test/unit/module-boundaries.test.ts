import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The shape of the analyzers (docs/analyzers.md, "Source layout"): every analyzer directory imports
 * only its own files, `shared/` and packages; `shared/` imports only itself and packages. What
 * several analyzers read (the normalised view, lexicons and brands, look-alike and similarity, the
 * log-odds math, the symbol registry) lives in `shared/`, so no analyzer reads another's files.
 */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Directories that hold one analyzer or context provider each. */
const ANALYZERS = [
  'headers',
  'urls',
  'content',
  'attachments',
  'rules',
  'scorer',
  'context',
  'directory',
  'llm',
  'sender-history',
];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(?:ts|mts|js|mjs)$/.test(e.name)) out.push(p);
  }
  return out;
}

/** Module specifiers of static imports, re-exports and dynamic imports in a source text. */
export function importSpecifiers(text: string): string[] {
  const out: string[] = [];
  const re =
    /(?:^|[\s;}])(?:import|export)\s[^'"`;]*?\sfrom\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/gm;
  for (const m of text.matchAll(re)) out.push((m[1] ?? m[2] ?? m[3]) as string);
  return out;
}

/** The top directory under src/ of a relative import from `file`, or undefined for a package. */
function targetDir(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const rel = relative(SRC, resolve(dirname(file), spec));
  return rel.startsWith('..') ? '..' : (rel.split(sep)[0] ?? '');
}

function violations(dir: string, allowed: readonly string[]): string[] {
  const bad: string[] = [];
  for (const file of sourceFiles(join(SRC, dir))) {
    for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('@trawl/analyzers')) bad.push(`${relative(SRC, file)} → ${spec}`);
      const to = targetDir(file, spec);
      if (to !== undefined && !allowed.includes(to)) bad.push(`${relative(SRC, file)} → ${spec}`);
    }
  }
  return bad;
}

describe('module boundaries of the analyzers', () => {
  it('finds the import forms it checks', () => {
    expect(
      importSpecifiers(
        [
          "import { a } from './a.ts';",
          "import type { B } from '../shared/b.ts';",
          'import {\n  c,\n  d,\n} from "../urls/c.ts";',
          "export { e } from '../content/e.ts';",
          "export * from './f.ts';",
          "import './side-effect.ts';",
          "const g = await import('../rules/g.ts');",
        ].join('\n'),
      ),
    ).toEqual([
      './a.ts',
      '../shared/b.ts',
      '../urls/c.ts',
      '../content/e.ts',
      './f.ts',
      './side-effect.ts',
      '../rules/g.ts',
    ]);
  });

  it.each(ANALYZERS)('%s/ imports only its own files, shared/ and packages', (dir) => {
    expect(sourceFiles(join(SRC, dir)).length).toBeGreaterThan(0);
    expect(violations(dir, [dir, 'shared'])).toEqual([]);
  });

  it('shared/ imports only shared/ and packages', () => {
    expect(violations('shared', ['shared'])).toEqual([]);
  });

  it('every other directory under src/ that defines an analyzer keeps to the same rule', () => {
    const others = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== 'shared' && !ANALYZERS.includes(e.name))
      .map((e) => e.name)
      .filter((d) =>
        sourceFiles(join(SRC, d)).some((f) =>
          /\bdefine(?:Analyzer|ContextProvider)\(/.test(readFileSync(f, 'utf8')),
        ),
      );
    for (const dir of others) expect(violations(dir, [dir, 'shared'])).toEqual([]);
  });
});
