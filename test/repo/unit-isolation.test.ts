import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e-run/helpers.ts';

// The unit project runs its files without isolation (vitest.config.ts, ADR 025): the files of one
// worker share its module cache and its process. That holds only while no unit file changes what
// the next file would find: a mocked module, fake timers, a stubbed global, an environment
// variable. A file that needs one of them belongs in a project that isolates its files.
const CHANGES_THE_PROCESS: [string, RegExp][] = [
  ['a mocked module', /\bvi\.(?:do)?mock\(/],
  ['fake timers', /\bvi\.useFakeTimers\(/],
  ['a stubbed global or variable', /\bvi\.stub(?:Global|Env)\(/],
  [
    'an environment variable set or deleted',
    /(?:\bdelete\s+process\.env\b|\bprocess\.env(?:\.\w+|\[[^\]\n]{1,80}\])\s*=[^=])/,
  ],
  ['a changed working folder', /\bprocess\.chdir\(/],
];

function unitFiles(): string[] {
  const found: string[] = [];
  for (const kind of ['packages', 'services']) {
    for (const name of readdirSync(join(ROOT, kind))) {
      const dir = join(ROOT, kind, name, 'test', 'unit');
      let entries: string[];
      try {
        entries = readdirSync(dir, { recursive: true, encoding: 'utf8' });
      } catch {
        continue;
      }
      for (const e of entries) if (e.endsWith('.ts')) found.push(join(dir, e));
    }
  }
  return found;
}

describe('unit test files (run without isolation)', () => {
  it('mock no module, fake no timer, stub nothing and set no environment variable', () => {
    const files = unitFiles();
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((f) => {
      const text = readFileSync(f, 'utf8');
      return CHANGES_THE_PROCESS.filter(([, re]) => re.test(text)).map(
        ([what]) => `${relative(ROOT, f)}: ${what}`,
      );
    });
    expect(found).toEqual([]);
  });
});
