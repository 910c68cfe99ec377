#!/usr/bin/env node
// `pnpm bench [name …]`: runs the benchmarks of the root package.json (`bench:<name>` scripts) one
// after another, each printing its figure beside a baseline measured in the same run
// (docs/benchmarks.md). With names, only those (`pnpm bench gateway mail`); `--list` lists them.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
const scripts = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).scripts;
const all = Object.keys(scripts)
  .filter((s) => s.startsWith('bench:'))
  .map((s) => s.slice('bench:'.length));
const args = process.argv.slice(2);
if (args.includes('--list')) {
  for (const name of all) console.log(`${name}\t${scripts[`bench:${name}`]}`);
  process.exit(0);
}
const unknown = args.filter((a) => !all.includes(a));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')} (have: ${all.join(', ')})`);
  process.exit(2);
}
const chosen = args.length > 0 ? args : all;
const failed = [];
for (const name of chosen) {
  console.log(`\n== pnpm bench:${name}`);
  const run = spawnSync('pnpm', ['-s', 'run', `bench:${name}`], { stdio: 'inherit', cwd: root });
  if (run.status !== 0) failed.push(name);
}
if (failed.length > 0) {
  console.error(`\nfailed: ${failed.join(', ')}`);
  process.exit(1);
}
