import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { findRepoRoot } from '@trawl/config';
import { describe, expect, it } from 'vitest';
import { sharedCorpus } from '../../../../test/support/require-component.ts';

const root = findRepoRoot();
const corpus = sharedCorpus();

describe.skipIf(corpus === null)('pnpm eval on the shared corpus', () => {
  it('runs the default workflow and ends with the figures line', () => {
    const out = execFileSync(
      join(root, 'node_modules', '.bin', 'tsx'),
      [join(root, 'packages/analyzers/src/bin/eval.ts'), corpus!, '--limit', '15'],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 },
    );
    const lines = out.trim().split('\n');
    expect(lines.at(-1)).toMatch(
      /^precision=\d\.\d{3} recall=\d\.\d{3} F1=\d\.\d{3} FPR=\d\.\d{3} msgs\/s=\d+(\.\d)?$/,
    );
    expect(out).toMatch(/TP=\d+ FP=\d+ FN=\d+ TN=\d+/);
    expect(out).toContain('per analyzer');
    expect(out).toContain('per indicator type');
  });
});
