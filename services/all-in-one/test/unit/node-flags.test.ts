import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findRepoRoot } from '@trawl/config';
import { describe, expect, it } from 'vitest';
import { EMBEDDED_NODE_FLAGS } from '../../src/index.ts';

describe('the embedded process flags (ADR 027)', () => {
  it('`pnpm start` runs node with each of them', () => {
    const pkg = JSON.parse(readFileSync(join(findRepoRoot(), 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const start = pkg.scripts.start ?? '';
    const args = start.split(/\s+/);
    expect(args[0]).toBe('node');
    const before = args.slice(0, args.indexOf('--import'));
    for (const flag of EMBEDDED_NODE_FLAGS) expect(before).toContain(flag);
  });

  it('this node knows each of them (an unknown one stops node at start)', () => {
    const r = spawnSync(process.execPath, [...EMBEDDED_NODE_FLAGS, '-e', '0'], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
