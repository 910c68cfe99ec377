import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e-run/helpers.ts';
import { type ImportEdge, importGraph, reachesInside, workspaces } from './import-graph.ts';

// Issue 30: a package's public face was whatever someone once needed (the benches reached into 20
// internal paths, one of them a test file). Code outside a package (another package, a service, a
// bench) reaches it only by its name and an entry point its package.json declares (`exports`),
// and an entry point exports by name, so that what it offers is chosen and read in one place.
/**
 * No exception: bench/smtp and bench/profile drive the SMTP filter through
 * `@trawl/retriever-smtp/testing` (its Trawl stack, signed mail, the platform key), since issue 29.
 */
const KNOWN = new Set<string>([]);

describe('public faces', () => {
  const spaces = workspaces(ROOT);
  const inside = reachesInside(spaces);

  it('sources and benches import another package only through its declared entry points', () => {
    const found = importGraph(ROOT)
      .filter(inside)
      .map((e) => `${e.from}: ${e.specifier}`);
    expect(found.filter((f) => !KNOWN.has(f))).toEqual([]);
  });

  it('entry points export by name (no export *)', () => {
    const star = spaces
      .flatMap((w) => [...w.exports.values()])
      .filter((f) => f.endsWith('.ts'))
      .filter((f) => /^export \* from/m.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(star).toEqual([]);
  });

  it('the rule sees a path into a package, a relative path across, and a bench using a test', () => {
    const e = (from: string, specifier: string, to: string): ImportEdge => ({
      from,
      specifier,
      to,
    });
    const an = 'packages/analyzers/src';
    expect(
      [
        e('bench/e2e/run.ts', '@trawl/analyzers', `${an}/index.ts`),
        e('bench/e2e/run.ts', `../../${an}/index.ts`, `${an}/index.ts`),
        e('bench/e2e/run.ts', `../../${an}/registry.ts`, `${an}/registry.ts`),
        e('bench/e2e/cluster.ts', '../../test/e2e-run/helpers.ts', 'test/e2e-run/helpers.ts'),
        e('services/api-gateway/src/a.ts', './b.ts', 'services/api-gateway/src/b.ts'),
        e('test/x.test.ts', `../${an}/registry.ts`, `${an}/registry.ts`),
      ].map(inside),
    ).toEqual([false, true, true, true, false, false]);
  });
});
