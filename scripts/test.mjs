#!/usr/bin/env node
// Runs the whole test suite (unit + integration) with vitest and ends with the line CI reads:
// `N passed, N failed` (and `, N skipped` when some were skipped).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const report = join(root, '.vitest-report.json');
rmSync(report, { force: true });
const args = [
  'vitest',
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${report}`,
  ...process.argv.slice(2),
];
const run = spawnSync('pnpm', ['exec', ...args], { stdio: 'inherit', cwd: root });

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  passed = r.numPassedTests ?? 0;
  failed = r.numFailedTests ?? 0;
  skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  // A file that fails to load counts as a failure even though it holds no test that ran.
  const brokenFiles = (r.testResults ?? []).filter(
    (f) => f.status === 'failed' && (f.assertionResults ?? []).every((a) => a.status !== 'failed'),
  ).length;
  failed += brokenFiles;
} else {
  failed = 1;
}
// vitest also fails a run for errors outside any test (an unhandled rejection, a crashed worker):
// count such a run as one failure so the closing line never reads "0 failed" on a red run.
if (run.status !== 0 && failed === 0) {
  console.log(
    'vitest failed outside any test (see "Unhandled Errors" above): counted as 1 failure',
  );
  failed = 1;
}
const code = run.status === 0 && failed === 0 ? 0 : 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(code);
