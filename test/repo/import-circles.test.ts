import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e-run/helpers.ts';
import { findCircles, importGraph, specifiersOf, workspaces } from './import-graph.ts';

// Issue 30: a type-only circle tied the gateway's context.ts, deps.ts and routes/backup.ts. A circle
// makes load order matter (a value read before its module ran is undefined) and two files that
// cannot be understood one without the other; type-only ones count too, as they become value ones
// with one edit.
describe('import circles', () => {
  it('none in the repository (packages, services, bench, test, scripts; type-only imports too)', () => {
    const circles = findCircles(importGraph(ROOT));
    expect(circles.map((c) => c.join(' -> '))).toEqual([]);
  });

  it('none between packages (the workspace dependencies of every package.json)', () => {
    const edges = workspaces(ROOT).flatMap((w) => {
      const pkg = JSON.parse(readFileSync(join(ROOT, w.dir, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
      };
      return Object.keys(pkg.dependencies ?? {})
        .filter((d) => d.startsWith('@trawl/'))
        .map((d) => ({ from: w.name, to: d }));
    });
    expect(edges.length).toBeGreaterThan(20);
    expect(findCircles(edges).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('are found however the import is written, and named as a walk round the circle', () => {
    const edges = [
      // the gateway's circle as it was: a type import, a type re-export, a type in a type position
      ...specifiersOf(`import type { GatewayDeps } from './deps.ts';`).map((to) => ({
        from: 'context.ts',
        to: to.slice(2),
      })),
      ...specifiersOf(`export type { BackupResult } from './backup.ts';`).map((to) => ({
        from: 'deps.ts',
        to: to.slice(2),
      })),
      ...specifiersOf(`let c: import('./context.ts').GatewayContext;`).map((to) => ({
        from: 'backup.ts',
        to: to.slice(2),
      })),
      { from: 'app.ts', to: 'context.ts' },
      { from: 'self.ts', to: 'self.ts' },
      { from: 'app.ts', to: undefined },
    ];
    const circles = findCircles(edges).map((c) => c.join(' -> '));
    expect(circles.sort()).toEqual([
      'backup.ts -> context.ts -> deps.ts -> backup.ts',
      'self.ts -> self.ts',
    ]);
    expect(findCircles(edges.filter((e) => e.from !== 'deps.ts'))).toEqual([
      ['self.ts', 'self.ts'],
    ]);
  });
});
