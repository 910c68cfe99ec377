/**
 * The analysis alone in a process of its own (bench/analysis-alone.ts `analysisAloneWarm`): the
 * messages of `dir` through `pnpm eval`'s runner on this thread, `warmup` messages first, then
 * `runs` measured runs, each run's CPU ms per message (every thread of this process) sent back.
 */
import { analysisAlone } from './analysis-alone.ts';

const { dir, warmup, runs } = JSON.parse(process.argv[2] ?? '{}') as {
  dir: string;
  warmup: number;
  runs: number;
};
try {
  let warmed = 0;
  while (warmed < warmup) warmed += (await analysisAlone(dir, { workers: 0 })).messages;
  const cpu: number[] = [];
  for (let r = 0; r < runs; r++) cpu.push((await analysisAlone(dir, { workers: 0 })).cpuPerMsgMs);
  process.send?.({ cpu, warmed }, () => process.exit(0));
} catch (err) {
  console.error(err);
  process.exit(1);
}
