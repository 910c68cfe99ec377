import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e-run/helpers.ts';

// `pnpm bench` once named scripts/bench.mjs, which did not exist: every file a root script runs
// must be there.
const scripts = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

/** The file arguments of a script (paths with a source extension). */
function filesOf(command: string): string[] {
  return command
    .split(/\s+/)
    .filter((word) => /^[\w./-]+\.(?:[cm]?js|ts|sh)$/.test(word))
    .filter((word) => !word.startsWith('-'));
}

describe('root package.json scripts', () => {
  it('name only files that exist', () => {
    const missing = Object.entries(scripts).flatMap(([name, command]) =>
      filesOf(command)
        .filter((f) => !existsSync(join(ROOT, f)))
        .map((f) => `${name}: ${f}`),
    );
    expect(missing).toEqual([]);
  });

  it('pnpm bench lists every bench:* script', () => {
    const listed = execFileSync(process.execPath, [join(ROOT, 'scripts/bench.mjs'), '--list'], {
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .map((line) => `bench:${line.split('\t')[0]}`);
    const declared = Object.keys(scripts).filter((s) => s.startsWith('bench:'));
    expect(declared.length).toBeGreaterThan(0);
    expect(listed).toEqual(declared);
  });
});
