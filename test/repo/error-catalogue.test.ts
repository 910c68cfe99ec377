import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e-run/helpers.ts';

// Issue 30, as fastify checks its Errors.md: docs/errors.md listed 112 of the 113 codes in the
// source (the reporter notifier logged an undocumented TRAWL_ERR_NOTIFY, and kept its codes outside
// any errors.ts). Every code the source names is defined in a package's errors.ts, and the
// catalogue lists exactly the codes defined.
const CODE = /\bTRAWL_ERR_[A-Z0-9]+(?:_[A-Z0-9]+)*\b/g;

function filesUnder(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'dist') filesUnder(join(dir, e.name), out);
    } else if (/\.tsx?$/.test(e.name)) {
      out.push(join(dir, e.name));
    }
  }
  return out;
}

/** Each code named in the packages' and services' source, with the files that name it. */
function codesInSource(only?: (file: string) => boolean): Map<string, string[]> {
  const codes = new Map<string, string[]>();
  for (const floor of ['packages', 'services']) {
    for (const name of readdirSync(join(ROOT, floor))) {
      const src = join(ROOT, floor, name, 'src');
      let files: string[];
      try {
        files = filesUnder(src);
      } catch {
        continue;
      }
      for (const file of files) {
        if (only && !only(file)) continue;
        for (const code of readFileSync(file, 'utf8').match(CODE) ?? []) {
          const where = codes.get(code) ?? [];
          where.push(file.slice(ROOT.length + 1));
          codes.set(code, where);
        }
      }
    }
  }
  return codes;
}

/** The codes of the catalogue: the first cell of each table row of docs/errors.md. */
function catalogue(): Set<string> {
  const text = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
  return new Set([...text.matchAll(/^\| `(TRAWL_ERR_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]!));
}

describe('the error catalogue (docs/errors.md)', () => {
  const defined = codesInSource((f) => /(?:^|[/-])errors\.ts$/.test(f));
  const named = codesInSource();
  const listed = catalogue();

  it('reads the codes where they are defined and listed', () => {
    expect(defined.get('TRAWL_ERR_VALIDATION')).toContain('packages/contracts/src/errors.ts');
    expect(defined.get('TRAWL_ERR_NOTIFY_SEND')).toContain('packages/investigation/src/errors.ts');
    expect(listed.has('TRAWL_ERR_VALIDATION')).toBe(true);
    expect(listed.size).toBeGreaterThan(100);
  });

  it("every code the source names is defined in a package's errors.ts", () => {
    const outside = [...named].filter(([code]) => !defined.has(code));
    expect(outside.map(([code, files]) => `${code} (${files.join(', ')})`)).toEqual([]);
  });

  it('lists every code defined in an errors.ts', () => {
    const missing = [...defined].filter(([code]) => !listed.has(code));
    expect(missing.map(([code, files]) => `${code} (${files.join(', ')})`)).toEqual([]);
  });

  it('lists no code that the source does not define', () => {
    expect([...listed].filter((code) => !defined.has(code))).toEqual([]);
  });
});
