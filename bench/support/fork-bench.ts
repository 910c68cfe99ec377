import { type ChildProcess, fork } from 'node:child_process';
import { findRepoRoot } from '@trawl/config';

/**
 * A bench's TypeScript child process (`file`, given `arg` as its one argument) with an IPC
 * channel, its output on the bench's, run under tsx with the V8 flags of BENCH_TRAWL_NODE_ARGS
 * (e.g. --trace-gc): Trawl's process and the baseline beside it get the same ones; `flags` are
 * the process's own (the embedded shape's, as `pnpm start` runs it).
 */
export function forkBench(file: string, arg: string, flags: readonly string[] = []): ChildProcess {
  return fork(file, [arg], {
    cwd: findRepoRoot(),
    execArgv: [
      ...flags,
      '--import',
      'tsx',
      ...(process.env.BENCH_TRAWL_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}
