import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e-run/helpers.ts';

// Issue 30: facts a reader can check. A service is a thin process around packages: no file of a
// service's sources over 400 lines (a longer one holds more than one thing; split it by what its
// parts do), and the analyzer orchestrator, once 3,420 lines, under 2,000 in all.
const MAX_FILE_LINES = 400;
const MAX_ORCHESTRATOR_LINES = 2_000;

/** Every .ts and .tsx file under `dir`, with its line count. */
function sources(dir: string): { file: string; lines: number }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && /\.tsx?$/.test(d.name))
    .map((d) => {
      const path = join(d.parentPath, d.name);
      const text = readFileSync(path, 'utf8');
      const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
      return { file: relative(ROOT, path), lines };
    });
}

const services = readdirSync(join(ROOT, 'services'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => join(ROOT, 'services', d.name, 'src'));

describe('service sizes', () => {
  it(`no file under services/*/src is over ${MAX_FILE_LINES} lines`, () => {
    const long = services
      .flatMap((dir) => {
        try {
          return sources(dir);
        } catch {
          return []; // a service without src/
        }
      })
      .filter((f) => f.lines > MAX_FILE_LINES)
      .map((f) => `${f.file}: ${f.lines}`);
    expect(long).toEqual([]);
  });

  it(`the analyzer orchestrator's sources are under ${MAX_ORCHESTRATOR_LINES} lines in all`, () => {
    const files = sources(join(ROOT, 'services/analyzer-orchestrator/src'));
    expect(files.length).toBeGreaterThan(0);
    const total = files.reduce((n, f) => n + f.lines, 0);
    expect(total).toBeLessThan(MAX_ORCHESTRATOR_LINES);
  });
});
